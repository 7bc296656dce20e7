import t from 'tap'
import { createHmac } from 'node:crypto'
import { connect } from 'node:net'
import { buildTestApp } from '../helpers/app.js'
import { call, loginAs, unchecked, type As, type Req } from '../helpers/call.js'
import { createKey, createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { decodeJwtUnverified, signJwt } from '../../src/lib/jwt.js'
import { createManualClock } from '../../src/lib/clock.js'
import { encryptSecret } from '../../src/lib/crypto-box.js'
import { jwtSecretContext } from '../../src/security/keystore.js'

const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')

t.test('getMe: access-token verification at the gate', async (t) => {
  const clock = createManualClock()
  const app = await buildTestApp(t, {}, { clock })
  const tenant = await createTenant(app)
  const victim = await createTenant(app)
  const user = await createUser(app, tenant, { roles: ['admin'] })
  const token = await tokenFor(app, user)
  const me = (authorization: string) => call(app, 'getMe', { headers: { authorization } })
  const claims = decodeJwtUnverified(token)?.payload ?? {}

  t.test('200 for a good token', async (t) => {
    t.equal((await me(`Bearer ${token}`)).status, 200)
  })

  t.test('alg none is refused', async (t) => {
    const none = `${b64({ alg: 'none', typ: 'JWT', kid: 'default' })}.${b64(claims)}.`
    const res = await me(`Bearer ${none}`)
    t.equal(res.status, 401)
    t.equal(res.code, 'UNAUTHORIZED')
  })

  t.test('HS512 is refused even with the right secret', async (t) => {
    const head = b64({ alg: 'HS512', typ: 'JWT', kid: 'default' })
    const body = b64(claims)
    const sig = createHmac('sha512', 'test-default-jwt-secret-0123456789abcdef')
      .update(`${head}.${body}`)
      .digest('base64url')
    t.equal((await me(`Bearer ${head}.${body}.${sig}`)).status, 401)
  })

  t.test('unknown kid and tampered payload are refused', async (t) => {
    const [h, p, s] = token.split('.')
    const badKid = `${b64({ alg: 'HS256', typ: 'JWT', kid: 'nope' })}.${p}.${s}`
    t.equal((await me(`Bearer ${badKid}`)).status, 401)
    const tampered = `${h}.${b64({ ...claims, permissions: ['admin:*'] })}.${s}`
    t.equal((await me(`Bearer ${tampered}`)).status, 401)
  })

  t.test("a token signed with one tenant's own secret but claiming another tenant is refused", async (t) => {
    const own = 'tenant-own-secret-that-it-knows-0123456789'
    await app.ctx.dbs.main
      .insertInto('tenant_secrets')
      .values({
        tenant_id: tenant.id,
        kid: 'own-kid-1',
        secret_enc: encryptSecret(own, app.ctx.secretsKey, jwtSecretContext(tenant.id)),
      })
      .execute()
    app.ctx.keystore.invalidate(tenant.id)
    const forged = signJwt({ ...claims, tenantId: victim.id, tenantCode: victim.code }, own, 'own-kid-1')
    const res = await me(`Bearer ${forged}`)
    t.equal(res.status, 401)
    t.equal(res.code, 'UNAUTHORIZED')
    const legit = signJwt(claims, own, 'own-kid-1')
    t.equal((await me(`Bearer ${legit}`)).status, 200, 'the same secret works for its own tenant')
  })

  t.test('401 TOKEN_EXPIRED with text "Token expired" past exp', async (t) => {
    const short = await tokenFor(app, user, 60)
    clock.advance(61_000)
    const res = await me(`Bearer ${short}`)
    t.equal(res.status, 401)
    t.same(res.body, { success: false, error: 'Token expired', code: 'TOKEN_EXPIRED' })
  })

  t.test('a token accepted before (and remembered) is still refused once past exp', async (t) => {
    const short = await tokenFor(app, user, 60)
    t.equal((await me(`Bearer ${short}`)).status, 200)
    clock.advance(59_000)
    t.equal((await me(`Bearer ${short}`)).status, 200, 'a second before exp')
    clock.advance(1_000)
    const res = await me(`Bearer ${short}`)
    t.equal(res.status, 401)
    t.same(res.body, { success: false, error: 'Token expired', code: 'TOKEN_EXPIRED' })
  })

  t.test('401 for garbage, a malformed header and no credential', async (t) => {
    t.equal((await me('Bearer not.a.jwt')).status, 401)
    t.equal((await me('Basic abc')).status, 401)
    const none = await call(app, 'getMe')
    t.equal(none.status, 401)
    t.equal(none.code, 'UNAUTHORIZED')
  })
})

t.test('Client Key credentials at the gate', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant, { roles: ['admin'] })
  const token = await tokenFor(app, user)
  const key = await createKey(app, tenant, ['users:create'])
  // POST /register is a JWT / Key route; an empty body is a 400 that only a request past the gate gets.
  const PASSED = 400
  const logs = (headers: Record<string, string>, as: As = {}) =>
    call(app, 'register', { ...as, headers }, { body: unchecked({}) })

  t.test('works through X-Client-Key and through Authorization: Bearer ck_', async (t) => {
    t.equal((await logs({ 'x-client-key': key.value })).status, PASSED)
    t.equal((await logs({ authorization: `Bearer ${key.value}` })).status, PASSED)
  })

  t.test('401 when both a JWT and a key are sent', async (t) => {
    const res = await logs({ authorization: `Bearer ${token}`, 'x-client-key': key.value })
    t.equal(res.status, 401)
    t.equal(res.code, 'UNAUTHORIZED')
  })

  t.test('401 for a key on a JWT-only route', async (t) => {
    const res = await call(app, 'listAuthLogs', { key: key.value })
    t.equal(res.status, 401)
  })

  t.test('401 for an unknown key', async (t) => {
    t.equal((await logs({ 'x-client-key': 'ck_' + 'x'.repeat(43) })).status, 401)
  })

  t.test('403 FORBIDDEN for a key without the permission', async (t) => {
    const weak = await createKey(app, tenant, ['users:read'])
    const res = await logs({ 'x-client-key': weak.value })
    t.equal(res.status, 403)
    t.equal(res.code, 'FORBIDDEN')
  })

  t.test('403 IP_NOT_ALLOWED and ORIGIN_NOT_ALLOWED from the allowlists', async (t) => {
    const fenced = await createKey(app, tenant, ['users:create'], {
      ipAllowlist: ['203.0.113.0/24', '2001:db8::/32'],
      originAllowlist: ['https://ok.example.test'],
    })
    const ok = await logs(
      { 'x-client-key': fenced.value, origin: 'https://ok.example.test' },
      { ip: '203.0.113.9' },
    )
    t.equal(ok.status, PASSED)
    const v6 = await logs({ 'x-client-key': fenced.value }, { ip: '2001:db8::5' })
    t.equal(v6.status, PASSED, 'IPv6 in the list, no Origin header is allowed')
    const ip = await logs({ 'x-client-key': fenced.value }, { ip: '198.51.100.1' })
    t.equal(ip.status, 403)
    t.equal(ip.code, 'IP_NOT_ALLOWED')
    const origin = await logs(
      { 'x-client-key': fenced.value, origin: 'https://evil.example.test' },
      { ip: '203.0.113.9' },
    )
    t.equal(origin.status, 403)
    t.equal(origin.code, 'ORIGIN_NOT_ALLOWED')
  })
})

t.test('listAuthLogs: GET /auth-logs', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const admin = await createUser(app, tenant, { roles: ['admin'] })
  const plain = await createUser(app, tenant, { roles: ['user'] })
  const auth = { token: await tokenFor(app, admin) }
  for (const ip of ['192.0.2.1', '192.0.2.2']) {
    await loginAs(app, admin, { password: 'wrong-password', ip })
  }
  const list = (query: Req<'listAuthLogs'>['query'] = {}) => call(app, 'listAuthLogs', auth, { query })

  t.test('lists rows newest first with filters and paging', async (t) => {
    const all = (await list()).data
    t.equal(all.total, 2)
    t.equal(all.limit, 50)
    t.equal(all.offset, 0)
    t.equal(all.items[0]?.ip_address, '192.0.2.2', 'newest first')
    t.equal((await list({ ip: '192.0.2.1' })).data.total, 1)
    t.equal((await list({ success: true })).data.total, 0)
    t.equal((await list({ action: 'LOGIN', since: '1h' })).data.total, 2)
    t.equal((await list({ userId: admin.id, limit: 1, offset: 1 })).data.items.length, 1)
  })

  t.test('400 for a limit over 500 and a bad since', async (t) => {
    t.equal((await list({ limit: 501 })).status, 400)
    t.equal((await list({ since: 'yesterday' })).status, 400)
    t.equal((await list({ since: '0h' })).status, 400, 'an empty window is not silently ignored')
  })

  t.test('403 without auth:logs', async (t) => {
    const res = await call(app, 'listAuthLogs', { token: await tokenFor(app, plain) })
    t.equal(res.status, 403)
  })
})

t.test('one credential header of each kind, and bounded token lifetimes', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant, { roles: ['admin'] })
  const token = await tokenFor(app, user)
  const key = await createKey(app, tenant, ['users:read'])
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const { hostname, port } = new URL(address)

  // Raw HTTP: a client library would merge or refuse repeated headers before they reach the wire.
  const raw = (headers: string[], path = '/api/v1/me') =>
    new Promise<number>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        socket.write(
          `GET ${path} HTTP/1.1\r\nHost: x\r\n${headers.join('\r\n')}\r\nConnection: close\r\n\r\n`,
        )
      })
      let text = ''
      socket.on('data', (d) => (text += d.toString()))
      socket.on('end', () => resolve(Number(text.split(' ')[1])))
      socket.on('error', reject)
    })
  t.equal(await raw([`Authorization: Bearer ${token}`]), 200, 'one Authorization header')
  t.equal(await raw([`Authorization: Bearer ${token}`, 'Authorization: Bearer junk']), 401, 'two, first good')
  t.equal(await raw(['Authorization: Bearer junk', `Authorization: Bearer ${token}`]), 401, 'two, last good')
  t.equal(
    await raw([`Authorization: Bearer ${token}`, `authorization: Bearer ${token}`]),
    401,
    'the same twice',
  )
  const users = (headers: string[]) => raw(headers, '/api/v1/users')
  t.equal(await users([`X-Client-Key: ${key.value}`]), 200, 'one X-Client-Key header')
  t.equal(await users([`X-Client-Key: ${key.value}`, `X-Client-Key: ${key.value}`]), 401, 'two X-Client-Key')

  // The tenant's own secret signs whatever it likes; the lifetime rules still hold.
  const generated = await call(app, 'generateJwtSecret', { token })
  const { secret, kid } = generated.data as { secret: string; kid: string }
  const claims = decodeJwtUnverified(token)?.payload ?? {}
  const now = Math.floor(Date.now() / 1000)
  const me = (c: object) => call(app, 'getMe', { token: signJwt({ ...claims, ...c }, secret, kid) })
  t.equal((await me({ iat: now, exp: now + 600 })).status, 200, 'a sane token of its own')
  t.equal((await me({ iat: now, exp: 1e20 })).status, 401, 'exp of 10^20')
  t.equal((await me({ iat: now, exp: now + 86_401 })).status, 401, 'exp - iat over a day')
  t.equal((await me({ iat: now - 10, exp: now + 86_390 })).status, 200, 'exactly a day')
  t.equal((await me({ iat: now + 120, exp: now + 600 })).status, 401, 'iat two minutes ahead')
  t.equal((await me({ iat: undefined, exp: now + 600 })).status, 401, 'no iat')
})
