import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call, callRaw, unchecked } from '../helpers/call.js'
import { createKey, createTenant, createUser, freshIp, tokenFor } from '../helpers/fixtures.js'

t.test('error envelope', async (t) => {
  const app = await buildTestApp(t)

  t.test('404 NOT_FOUND for an unknown route', async (t) => {
    const res = await callRaw(app, 'GET', '/api/v1/nope')
    t.equal(res.status, 404)
    t.same(res.body, { success: false, error: 'Route not found', code: 'NOT_FOUND' })
  })

  t.test('400 VALIDATION_ERROR with details for a wrong body', async (t) => {
    const res = await call(app, 'login', null, { body: unchecked({ tenantCode: 'x', extra: 1 }) })
    t.equal(res.status, 400)
    const body = { ...res.body, details: res.body.details as { path: string; message: string }[] }
    t.equal(body.code, 'VALIDATION_ERROR')
    t.ok(Array.isArray(body.details) && body.details.length > 0)
    t.ok(
      body.details.every(
        (d: { path: string; message: string }) => typeof d.path === 'string' && typeof d.message === 'string',
      ),
    )
    t.ok(
      body.details.some((d: { path: string }) => d.path === 'body.extra'),
      'unknown property reported',
    )
  })

  t.test('400 VALIDATION_ERROR for malformed JSON', async (t) => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"tenantCode":',
    })
    t.equal(res.statusCode, 400)
    t.equal(res.json().code, 'VALIDATION_ERROR')
  })

  t.test('413 PAYLOAD_TOO_LARGE above 64 KiB', async (t) => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/login',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ tenantCode: 'a', identifier: 'x'.repeat(70 * 1024), password: 'p' }),
    })
    t.equal(res.statusCode, 413)
    t.same(res.json(), { success: false, error: 'Payload too large', code: 'PAYLOAD_TOO_LARGE' })
  })

  t.test('415 UNSUPPORTED_MEDIA_TYPE for a non-JSON body', async (t) => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/login',
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    })
    t.equal(res.statusCode, 415)
    t.equal(res.json().code, 'UNSUPPORTED_MEDIA_TYPE')
  })

  t.test('500 INTERNAL_ERROR carries no internals', async (t) => {
    const original = app.ctx.tenants.byCode.bind(app.ctx.tenants)
    app.ctx.tenants.byCode = async () => {
      throw new Error('secret internal detail at /srv/db.ts:42')
    }
    t.teardown(() => {
      app.ctx.tenants.byCode = original
    })
    const res = await call(app, 'login', null, {
      body: { tenantCode: 'acme', identifier: 'a@b.co', password: 'whatever-long' },
    })
    t.equal(res.status, 500)
    t.same(res.body, { success: false, error: 'Internal server error', code: 'INTERNAL_ERROR' })
    t.notMatch(res.raw, /secret internal detail/)
  })
})

t.test('X-Request-Id', async (t) => {
  const app = await buildTestApp(t)
  t.test('echoes a well-formed incoming id', async (t) => {
    const res = await call(app, 'getHealthRoot', { headers: { 'x-request-id': 'abc-123.X:y_z' } })
    t.equal(res.headers['x-request-id'], 'abc-123.X:y_z')
  })
  t.test('replaces a malformed id with a generated one', async (t) => {
    const res = await call(app, 'getHealthRoot', { headers: { 'x-request-id': 'bad id with spaces' } })
    t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/)
  })
  t.test('is present on errors too', async (t) => {
    const res = await callRaw(app, 'GET', '/api/v1/nowhere')
    t.ok(res.headers['x-request-id'])
  })
})

t.test('headers', async (t) => {
  const app = await buildTestApp(t)
  const res = await call(app, 'getHealth')
  t.equal(res.headers['cache-control'], 'no-store', 'API responses are never cached')
  t.ok(res.headers['x-content-type-options'], 'helmet headers present')
  t.notOk(res.headers['access-control-allow-origin'], 'no CORS headers without CORS_ORIGINS')
})

t.test('CORS only for configured origins, never allowing X-Client-Key', async (t) => {
  const app = await buildTestApp(t, { CORS_ORIGINS: 'https://app.example.test' })
  const res = await app.inject({
    method: 'OPTIONS',
    url: '/api/v1/login',
    headers: {
      origin: 'https://app.example.test',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    },
  })
  t.equal(res.headers['access-control-allow-origin'], 'https://app.example.test')
  t.notMatch(String(res.headers['access-control-allow-headers']), /x-client-key/i)
  const other = await app.inject({
    method: 'OPTIONS',
    url: '/api/v1/login',
    headers: { origin: 'https://evil.example.test', 'access-control-request-method': 'POST' },
  })
  t.notOk(other.headers['access-control-allow-origin'])
})

// Errors Fastify raises before any route or hook runs (issue 10, item 3).
t.test('framework errors answer in the envelope', async (t) => {
  const app = await buildTestApp(t)
  const envelope = (res: { json(): unknown }) => res.json() as Record<string, unknown>

  t.test('400 VALIDATION_ERROR for broken percent-encoding in a path parameter', async (t) => {
    const res = await app.inject({
      method: 'GET',
      url: '/api/v1/users/%E0%A4%A-secret-in-path',
      headers: { 'x-request-id': 'bad-url-1' },
    })
    t.equal(res.statusCode, 400)
    t.same(Object.keys(envelope(res)).sort(), ['code', 'error', 'success'])
    t.equal(envelope(res).code, 'VALIDATION_ERROR')
    t.equal(res.headers['x-request-id'], 'bad-url-1')
    t.equal(res.headers['cache-control'], 'no-store')
    t.ok(res.headers['x-content-type-options'], 'security headers too')
    t.notMatch(res.body, /secret-in-path|%E0/i, 'the URL is not echoed')
  })

  t.test('400 VALIDATION_ERROR (not 414) for a path parameter over the router limit', async (t) => {
    const long = 'x'.repeat(150) + '-secret-in-path'
    for (const url of [`/api/v1/users/${long}`, `/api/v1/client-keys/${long}/revoke`]) {
      const res = await app.inject({ method: url.endsWith('revoke') ? 'POST' : 'GET', url })
      t.equal(res.statusCode, 400, url.slice(0, 30))
      t.same(Object.keys(envelope(res)).sort(), ['code', 'error', 'success'])
      t.equal(envelope(res).code, 'VALIDATION_ERROR')
      t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/)
      t.notMatch(res.body, /secret-in-path|xxxx/, 'the URL is not echoed')
    }
  })
})

// A JSON `null` (or any non-object) body is not an absent body (issue 10, item 5).
t.test('validateToken: optional body', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant)
  const token = await tokenFor(app, user)
  const post = (payload?: string, contentType?: string) =>
    app.inject({
      method: 'POST',
      url: '/api/v1/validate',
      headers: { authorization: `Bearer ${token}`, ...(contentType ? { 'content-type': contentType } : {}) },
      ...(payload === undefined ? {} : { payload }),
    })

  t.test('400 VALIDATION_ERROR for null, an array, a string or a number', async (t) => {
    for (const body of ['null', '[]', '[{}]', '"text"', '42', 'true']) {
      const res = await post(body, 'application/json')
      t.equal(res.statusCode, 400, body)
      t.equal(res.json().code, 'VALIDATION_ERROR', body)
    }
  })

  t.test('200 for an absent body, an empty JSON body and an empty object', async (t) => {
    for (const [payload, ctype] of [
      [undefined, undefined],
      ['', 'application/json'],
      ['{}', 'application/json'],
    ] as const) {
      const res = await post(payload, ctype)
      t.equal(res.statusCode, 200, `${ctype} ${JSON.stringify(payload)}`)
      t.equal(res.json().data.valid, true)
    }
  })
})

t.test('revokeClientKey: optional body', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const key = await createKey(app, tenant, ['client-keys:revoke'])
  const revoke = (payload?: string) =>
    app.inject({
      method: 'POST',
      url: `/api/v1/client-keys/${key.id}/revoke`,
      headers: {
        'x-client-key': key.value,
        'x-forwarded-for': freshIp(),
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(payload === undefined ? {} : { payload }),
    })

  t.test('400 VALIDATION_ERROR for a null body, and the key stays active', async (t) => {
    const res = await revoke('null')
    t.equal(res.statusCode, 400)
    t.equal(res.json().code, 'VALIDATION_ERROR')
    const row = await app.ctx.dbs.main
      .selectFrom('client_keys')
      .select('status')
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow()
    t.equal(row.status, 'ACTIVE')
  })
})
