import t from 'tap'
import { createManualClock } from '../../src/lib/clock.js'
import { buildTestApp } from '../helpers/app.js'
import { createKey, createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { call, type As } from '../helpers/call.js'

// How a key is presented and refused (the `clientKey` scheme in openapi/openapi.yaml, Credentials).
const clock = createManualClock()
const app = await buildTestApp(t, {}, { clock })
const tenant = await createTenant(app)
const admin = await createUser(app, tenant, { roles: ['admin'] })
const jwt = await tokenFor(app, admin, 86_400)

t.test('the key works through both headers', async (t) => {
  const k = await createKey(app, tenant, ['client-keys:read'])
  const viaHeader = await call(app, 'listTenantClientKeys', { key: k.value })
  t.equal(viaHeader.status, 200)
  const viaBearer = await call(app, 'listTenantClientKeys', { bearerKey: k.value })
  t.equal(viaBearer.status, 200)
  t.same(viaBearer.body.data, viaHeader.body.data)
  const scoped = await call(app, 'getClientKey', { bearerKey: k.value }, { params: { id: k.id } })
  t.equal(scoped.status, 200, 'scopes apply through Bearer too')
})

t.test('401 UNAUTHORIZED', async (t) => {
  const k = await createKey(app, tenant, ['client-keys:read'])
  const cases: [string, As][] = [
    ['an unknown key', { key: 'ck_' + 'u'.repeat(43) }],
    ['an unknown key as Bearer', { bearerKey: 'ck_' + 'u'.repeat(43) }],
    ['a malformed key', { key: 'ck_short' }],
    ['a JWT and a key together', { token: jwt, key: k.value }],
    ['a key in both headers', { key: k.value, bearerKey: k.value }],
  ]
  for (const [why, cred] of cases) {
    const r = await call(app, 'listTenantClientKeys', cred)
    t.equal(r.status, 401, why)
    t.equal(r.body.code, 'UNAUTHORIZED', why)
  }
  const me = await call(app, 'getMe', { key: k.value })
  t.equal(me.status, 401, 'a key on a JWT-only endpoint')
  t.equal(me.body.code, 'UNAUTHORIZED')
})

t.test('403 FORBIDDEN for a scope the key lacks', async (t) => {
  const k = await createKey(app, tenant, ['users:read'])
  const r = await call(app, 'getClientKey', { key: k.value }, { params: { id: k.id } })
  t.equal(r.status, 403)
  t.equal(r.body.code, 'FORBIDDEN')
  const created = await call(
    app,
    'createClientKey',
    { key: k.value },
    { body: { name: 'x', scopes: ['users:read'] } },
  )
  t.equal(created.body.code, 'FORBIDDEN')
  const wildcard = await createKey(app, tenant, ['client-keys:*'])
  t.equal((await call(app, 'getClientKey', { key: wildcard.value }, { params: { id: k.id } })).status, 200)
})

t.test('403 IP_NOT_ALLOWED', async (t) => {
  const v4 = await createKey(app, tenant, ['client-keys:read'], { ipAllowlist: ['203.0.113.0/24'] })
  const v6 = await createKey(app, tenant, ['client-keys:read'], { ipAllowlist: ['2001:db8::/32'] })
  const both = await createKey(app, tenant, ['client-keys:read'], {
    ipAllowlist: ['198.51.100.7', '2001:db8:1::/48'],
  })
  const cases: [string, string, string, number][] = [
    ['IPv4 inside', v4.value, '203.0.113.5', 200],
    ['IPv4 outside', v4.value, '198.51.100.5', 403],
    ['IPv4-mapped IPv6 inside, matched as IPv4', v4.value, '::ffff:203.0.113.5', 200],
    ['IPv4-mapped IPv6 outside', v4.value, '::ffff:198.51.100.5', 403],
    ['IPv6 inside', v6.value, '2001:db8::1', 200],
    ['IPv6 inside, other spelling', v6.value, '2001:0DB8:0:0::abcd', 200],
    ['IPv6 outside', v6.value, '2001:db9::1', 403],
    ['IPv4 on an IPv6 list', v6.value, '203.0.113.5', 403],
    ['a single address', both.value, '198.51.100.7', 200],
    ['next to the single address', both.value, '198.51.100.8', 403],
    ['the IPv6 block of a mixed list', both.value, '2001:db8:1:ffff::1', 200],
  ]
  for (const [why, key, ip, status] of cases) {
    const r = await call(app, 'listTenantClientKeys', { key, ip })
    t.equal(r.status, status, why)
    if (status === 403) t.equal(r.body.code, 'IP_NOT_ALLOWED', why)
  }
  const proxied = await call(app, 'listTenantClientKeys', {
    key: v4.value,
    ip: '127.0.0.1',
    headers: { 'x-forwarded-for': '203.0.113.77' },
  })
  t.equal(proxied.status, 200, 'the client address from a trusted proxy counts')
  const spoofed = await call(app, 'listTenantClientKeys', {
    key: v4.value,
    ip: '198.51.100.9',
    headers: { 'x-forwarded-for': '203.0.113.77' },
  })
  t.equal(spoofed.body.code, 'IP_NOT_ALLOWED', 'X-Forwarded-For from an untrusted sender is ignored')
})

t.test('403 ORIGIN_NOT_ALLOWED', async (t) => {
  const k = await createKey(app, tenant, ['client-keys:read'], {
    originAllowlist: ['https://app.example.org', 'http://localhost:5173'],
  })
  const cases: [string, Record<string, string>, number][] = [
    ['an allowed origin', { origin: 'https://app.example.org' }, 200],
    ['another allowed origin', { origin: 'http://localhost:5173' }, 200],
    ['no Origin header', {}, 200],
    ['another origin', { origin: 'https://evil.example' }, 403],
    ['another port', { origin: 'https://app.example.org:8443' }, 403],
    ['another scheme', { origin: 'http://app.example.org' }, 403],
    ['the opaque origin', { origin: 'null' }, 403],
  ]
  for (const [why, headers, status] of cases) {
    const r = await call(app, 'listTenantClientKeys', { key: k.value, headers })
    t.equal(r.status, status, why)
    if (status === 403) t.equal(r.body.code, 'ORIGIN_NOT_ALLOWED', why)
  }
  const open = await createKey(app, tenant, ['client-keys:read'])
  t.equal(
    (await call(app, 'listTenantClientKeys', { key: open.value, headers: { origin: 'https://x.test' } }))
      .status,
    200,
  )
})

t.test('expiry: 401 UNAUTHORIZED once past expiresAt, and status EXPIRED', async (t) => {
  const created = await call(
    app,
    'createClientKey',
    { token: jwt },
    {
      body: {
        name: 'short',
        scopes: ['client-keys:read'],
        expiresAt: new Date(clock.now() + 60_000).toISOString(),
      },
    },
  )
  t.equal(created.status, 201)
  const k = created.body.data
  t.equal((await call(app, 'listTenantClientKeys', { key: k.key })).status, 200)
  clock.advance(59_000)
  t.equal((await call(app, 'listTenantClientKeys', { key: k.key })).status, 200, 'one second before')
  clock.advance(1_000)
  const late = await call(app, 'listTenantClientKeys', { key: k.key })
  t.equal(late.status, 401, 'at expiresAt')
  t.equal(late.body.code, 'UNAUTHORIZED')
  const shown = await call(app, 'getClientKey', { token: jwt }, { params: { id: k.id } })
  t.equal(shown.body.data.status, 'EXPIRED')
  const expired = await call(app, 'listTenantClientKeys', { token: jwt }, { query: { status: 'EXPIRED' } })
  t.ok(expired.body.data.items.some((i: { id: string }) => i.id === k.id))
  const active = await call(app, 'listTenantClientKeys', { token: jwt }, { query: { status: 'ACTIVE' } })
  t.notOk(active.body.data.items.some((i: { id: string }) => i.id === k.id))

  t.test('a later expiry given by PATCH makes it usable again', async (t) => {
    const r = await call(
      app,
      'updateClientKey',
      { token: jwt },
      { params: { id: k.id }, body: { expiresAt: new Date(clock.now() + 60_000).toISOString() } },
    )
    t.equal(r.body.data.status, 'ACTIVE')
    t.equal((await call(app, 'listTenantClientKeys', { key: k.key })).status, 200)
  })
})

t.test('revoked: 401 UNAUTHORIZED at once on this instance', async (t) => {
  const k = await createKey(app, tenant, ['client-keys:read'])
  t.equal((await call(app, 'listTenantClientKeys', { key: k.value })).status, 200, 'cached as valid')
  await call(app, 'revokeClientKey', { token: jwt }, { params: { id: k.id } })
  const r = await call(app, 'listTenantClientKeys', { key: k.value })
  t.equal(r.status, 401)
  t.equal(r.body.code, 'UNAUTHORIZED')
})

t.test('a key may revoke itself; its own request completes', async (t) => {
  const k = await createKey(app, tenant, ['client-keys:revoke'])
  const r = await call(app, 'revokeClientKey', { key: k.value }, { params: { id: k.id } })
  t.equal(r.status, 200)
  t.equal((await call(app, 'listTenantClientKeys', { key: k.value })).status, 401)
})
