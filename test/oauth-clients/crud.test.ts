import t from 'tap'
import { createHash } from 'node:crypto'
import { buildTestApp } from '../helpers/app.js'
import { call, unchecked } from '../helpers/call.js'
import { auditRows, createTenant, createUser, tokenFor, UNKNOWN_ID } from '../helpers/fixtures.js'

// The OpenID provider's applications (contract section 23, "Applications"): the management operations.

const app = await buildTestApp(t)
const tenant = await createTenant(app)
const other = await createTenant(app)
const admin = await createUser(app, tenant, { roles: ['admin'] })
const as = { token: await tokenFor(app, admin) }
const otherAdmin = { token: await tokenFor(app, await createUser(app, other, { roles: ['admin'] })) }
const web = { name: 'Acme web', type: 'confidential' as const, redirectUris: ['https://app.acme.test/cb'] }

t.test('createOAuthClient: POST /oauth/clients', async (t) => {
  await t.test(
    'a confidential client: its secret shown once, only a hash stored, defaults applied',
    async (t) => {
      const res = await call(app, 'createOAuthClient', as, { body: web })
      t.equal(res.status, 201)
      const c = res.data
      t.match(c.clientSecret, /^[A-Za-z0-9_-]{43}$/)
      t.match(c, {
        tenantId: tenant.id,
        type: 'confidential',
        tokenEndpointAuthMethod: 'client_secret_basic',
        grantTypes: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'profile', 'email', 'offline_access'],
        firstParty: false,
        dynamic: false,
        postLogoutRedirectUris: [],
        backchannelLogoutUri: null,
      })
      const row = await app.ctx.dbs
        .forTenant(tenant.id)
        .selectFrom('oauth_clients')
        .select(['secret_hash'])
        .where('id', '=', c.id)
        .executeTakeFirstOrThrow()
      t.equal(
        row.secret_hash,
        createHash('sha256')
          .update(c.clientSecret ?? '')
          .digest('hex'),
        'the hash only',
      )
      const got = await call(app, 'getOAuthClient', as, { params: { id: c.id } })
      t.notOk('clientSecret' in (got.data as object), 'never shown again')
      const [audit] = await auditRows(app, tenant.id, 'OAUTH_CLIENT_CREATE')
      t.match(audit?.metadata, { clientId: c.clientId, target: { type: 'oauth_client', id: c.id } })
      t.notMatch(JSON.stringify(audit), c.clientSecret ?? 'x', 'no secret in the audit row')
    },
  )

  await t.test(
    'a public client: no secret, authenticates with none, may use a private-use scheme',
    async (t) => {
      const res = await call(app, 'createOAuthClient', as, {
        body: { name: 'Acme app', type: 'public', redirectUris: ['com.acme.app:/cb', 'http://127.0.0.1/cb'] },
      })
      t.equal(res.status, 201)
      t.equal(res.data.clientSecret, null)
      t.equal(res.data.tokenEndpointAuthMethod, 'none')
    },
  )

  await t.test('400 VALIDATION_ERROR for each rule of creation, nothing written', async (t) => {
    const before = await call(app, 'listOAuthClients', as, { query: {} })
    const bad = [
      { ...web, redirectUris: ['http://app.acme.test/cb'] },
      { ...web, redirectUris: ['https://app.acme.test/cb#x'] },
      { ...web, redirectUris: ['https://*.acme.test/cb'] },
      { ...web, redirectUris: ['com.acme.app:/cb'] },
      { ...web, redirectUris: ['javascript:alert(1)'] },
      { ...web, tokenEndpointAuthMethod: 'none' as const },
      { ...web, type: 'public' as const, tokenEndpointAuthMethod: 'client_secret_post' as const },
      { ...web, type: 'public' as const, grantTypes: ['client_credentials' as const] },
      { ...web, grantTypes: ['refresh_token' as const] },
      { ...web, backchannelLogoutUri: 'http://rp.acme.test/logout' },
      // Section 24's rule at registration: an unlisted host resolving to loopback, a private address, a name
      // that never resolves (RFC 6761's .invalid); no connection is made.
      { ...web, backchannelLogoutUri: 'https://localhost/logout' },
      { ...web, backchannelLogoutUri: 'https://10.0.0.7/logout' },
      { ...web, backchannelLogoutUri: 'https://rp.acme.invalid/logout' },
      { ...web, logoUri: 'http://cdn.acme.test/logo.png' },
    ]
    for (const body of bad) {
      const res = await call(app, 'createOAuthClient', as, { body })
      t.equal(res.status, 400, JSON.stringify(body))
      t.equal(res.code, 'VALIDATION_ERROR')
    }
    const after = await call(app, 'listOAuthClients', as, { query: {} })
    t.equal(after.data.total, before.data.total, 'nothing written')
  })

  await t.test(
    '401 REAUTHENTICATION_REQUIRED for a stale sign-in: a secret is a lasting credential',
    async (t) => {
      const stale = {
        token: await tokenFor(app, admin, 900, { authTime: Math.floor(Date.now() / 1000) - 3600 }),
      }
      const res = await call(app, 'createOAuthClient', stale, { body: web })
      t.equal(res.status, 401)
      t.equal(res.code, 'REAUTHENTICATION_REQUIRED')
    },
  )
})

t.test('listOAuthClients: GET /oauth/clients lists the caller’s tenant only, newest first', async (t) => {
  const mine = await call(app, 'listOAuthClients', as, { query: { limit: 100 } })
  t.equal(mine.status, 200)
  t.ok(mine.data.items.length >= 2)
  t.ok(mine.data.items.every((c) => c.tenantId === tenant.id))
  const theirs = await call(app, 'listOAuthClients', otherAdmin, { query: {} })
  t.equal(theirs.data.total, 0, 'another tenant sees none of them')
})

t.test(
  'getOAuthClient: 404 OAUTH_CLIENT_NOT_FOUND for an unknown id or another tenant’s client',
  async (t) => {
    const c = (await call(app, 'createOAuthClient', as, { body: web })).data
    t.equal((await call(app, 'getOAuthClient', as, { params: { id: c.id } })).status, 200)
    for (const [who, id] of [
      [as, UNKNOWN_ID],
      [otherAdmin, c.id],
    ] as const) {
      const res = await call(app, 'getOAuthClient', who, { params: { id } })
      t.equal(res.status, 404)
      t.equal(res.code, 'OAUTH_CLIENT_NOT_FOUND')
    }
  },
)

t.test('updateOAuthClient: PATCH /oauth/clients/:id', async (t) => {
  const c = (await call(app, 'createOAuthClient', as, { body: web })).data
  const res = await call(app, 'updateOAuthClient', as, {
    params: { id: c.id },
    body: { name: 'Renamed', redirectUris: ['https://app.acme.test/new'], scopes: ['openid', 'roles'] },
  })
  t.equal(res.status, 200)
  t.match(res.data, {
    name: 'Renamed',
    redirectUris: ['https://app.acme.test/new'],
    scopes: ['openid', 'roles'],
  })
  const rows = await auditRows(app, tenant.id, 'OAUTH_CLIENT_UPDATE')
  t.same(rows.at(-1)?.metadata.changed, ['name', 'redirectUris', 'scopes'], 'the names, never the values')
  const wrong = await call(app, 'updateOAuthClient', as, {
    params: { id: c.id },
    body: { tokenEndpointAuthMethod: 'none' },
  })
  t.equal(wrong.status, 400, 'the rules of creation apply to the result')
  const empty = await call(app, 'updateOAuthClient', as, { params: { id: c.id }, body: unchecked({}) })
  t.equal(empty.status, 400)
  const foreign = await call(app, 'updateOAuthClient', otherAdmin, {
    params: { id: c.id },
    body: { name: 'x' },
  })
  t.equal(foreign.status, 404)
  t.equal(foreign.code, 'OAUTH_CLIENT_NOT_FOUND')
})

t.test('rotateOAuthClientSecret: POST /oauth/clients/:id/secret/rotate', async (t) => {
  const c = (await call(app, 'createOAuthClient', as, { body: web })).data
  const res = await call(app, 'rotateOAuthClientSecret', as, {
    params: { id: c.id },
    body: { gracePeriodSeconds: 60 },
  })
  t.equal(res.status, 200)
  t.match(res.data.clientSecret, /^[A-Za-z0-9_-]{43}$/)
  t.not(res.data.clientSecret, c.clientSecret)
  const row = await app.ctx.dbs
    .forTenant(tenant.id)
    .selectFrom('oauth_clients')
    .select(['previous_secret_hash', 'previous_secret_expires_at'])
    .where('id', '=', c.id)
    .executeTakeFirstOrThrow()
  t.equal(
    row.previous_secret_hash,
    createHash('sha256')
      .update(c.clientSecret ?? '')
      .digest('hex'),
  )
  t.ok(row.previous_secret_expires_at, 'the former secret lasts its grace')
  const pub = (
    await call(app, 'createOAuthClient', as, {
      body: { name: 'Public', type: 'public', redirectUris: ['http://127.0.0.1/cb'] },
    })
  ).data
  const none = await call(app, 'rotateOAuthClientSecret', as, { params: { id: pub.id }, body: {} })
  t.equal(none.status, 400, 'a public client has no secret')
  const foreign = await call(app, 'rotateOAuthClientSecret', otherAdmin, { params: { id: c.id }, body: {} })
  t.equal(foreign.status, 404)
  const stale = { token: await tokenFor(app, admin, 900, { authTime: Math.floor(Date.now() / 1000) - 3600 }) }
  const late = await call(app, 'rotateOAuthClientSecret', stale, { params: { id: c.id }, body: {} })
  t.equal(late.status, 401)
  t.equal(late.code, 'REAUTHENTICATION_REQUIRED')
})

t.test('deleteOAuthClient: DELETE /oauth/clients/:id', async (t) => {
  const c = (await call(app, 'createOAuthClient', as, { body: web })).data
  const foreign = await call(app, 'deleteOAuthClient', otherAdmin, { params: { id: c.id } })
  t.equal(foreign.status, 404, 'another tenant cannot delete it')
  const res = await call(app, 'deleteOAuthClient', as, { params: { id: c.id } })
  t.equal(res.status, 200)
  t.same(res.data, { id: c.id, deleted: true })
  const again = await call(app, 'deleteOAuthClient', as, { params: { id: c.id } })
  t.equal(again.status, 404)
  t.equal(again.code, 'OAUTH_CLIENT_NOT_FOUND')
  const [row] = await auditRows(app, tenant.id, 'OAUTH_CLIENT_DELETE')
  t.match(row?.metadata, { clientId: c.clientId })
})
