import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createKey, createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { createManualClock } from '../../src/lib/clock.js'
import { decodeJwtUnverified, signJwt, verifyJwtSignature } from '../../src/lib/jwt.js'
import { decryptSecret, deriveKey } from '../../src/lib/crypto-box.js'
import { call, login, userWithToken } from './support.js'

const DAY = 24 * 60 * 60 * 1000
const kidOf = (token: string) => decodeJwtUnverified(token)?.header.kid

t.test('signing secret: generate, get, set, clear with the 7-day overlap', async (t) => {
  const clock = createManualClock()
  const app = await buildTestApp(t, {}, { clock })
  const tenant = await createTenant(app)
  const adminUser = await createUser(app, tenant, { roles: ['admin'] })
  // Why 30 days: these tokens must outlive the overlap, so a refusal is the secret's doing, not `exp`.
  const longToken = () => tokenFor(app, adminUser, 30 * 24 * 3600)
  const admin = { token: await longToken() }
  const signedWithDefault = admin.token

  const initial = await call(app, 'GET', '/tenants/me/jwt-secret', admin)
  t.equal(initial.status, 200)
  t.same(initial.body.data, {
    configured: false,
    kid: 'default',
    secret: null,
    createdAt: null,
    previous: null,
  })
  t.equal(kidOf(signedWithDefault), 'default')

  const gen = await call(app, 'POST', '/tenants/me/jwt-secret/generate', admin)
  t.equal(gen.status, 200)
  const g = gen.body.data
  t.equal(g.configured, true)
  t.match(g.secret, /^[A-Za-z0-9_-]{43}$/)
  t.not(g.kid, 'default')
  t.equal(g.previous.kid, 'default')
  t.equal(Date.parse(g.previous.expiresAt), clock.now() + 7 * DAY)
  t.same((await call(app, 'GET', '/tenants/me/jwt-secret', admin)).body.data, g, 'GET shows the same state')

  await t.test('new tokens carry the new kid and verify with the shown secret', async (t) => {
    const res = await login(app, tenant.code, adminUser.email)
    t.equal(res.status, 200)
    t.equal(kidOf(res.body.data.accessToken), g.kid)
    t.ok(verifyJwtSignature(res.body.data.accessToken, Buffer.from(g.secret, 'utf8')))
    t.equal((await call(app, 'GET', '/me', { token: res.body.data.accessToken })).status, 200)
  })

  await t.test('the secret is encrypted at rest and unreadable without SECRETS_KEY', async (t) => {
    const row = await app.ctx.dbs.main
      .selectFrom('tenant_secrets')
      .select(['secret_enc'])
      .where('kid', '=', g.kid)
      .executeTakeFirstOrThrow()
    t.notMatch(row.secret_enc, g.secret)
    const refused = { message: /authentication failed/ }
    t.throws(
      () => decryptSecret(row.secret_enc, deriveKey('some-other-secrets-key-0123456789abcdef')),
      refused,
    )
    t.throws(() => decryptSecret(row.secret_enc, app.ctx.secretsKey), refused, 'bound to its tenant')
    t.equal(decryptSecret(row.secret_enc, app.ctx.secretsKey, `tenant:${tenant.id}:jwt-secret`), g.secret)
  })

  const signedWithGenerated = await longToken()
  t.equal(kidOf(signedWithGenerated), g.kid)

  await t.test('set: 400 under 32 characters; 200 makes the given secret current', async (t) => {
    const short = await call(app, 'POST', '/tenants/me/jwt-secret/set', admin, { secret: 'x'.repeat(31) })
    t.equal(short.status, 400)
    t.equal(short.body.code, 'VALIDATION_ERROR')
    clock.advance(DAY)
    const secret = 'a-tenant-chosen-secret-of-enough-bytes'
    const res = await call(app, 'POST', '/tenants/me/jwt-secret/set', admin, { secret })
    t.equal(res.status, 200)
    t.equal(res.body.data.secret, secret)
    t.not(res.body.data.kid, g.kid)
    t.same(res.body.data.previous, { kid: g.kid, expiresAt: new Date(clock.now() + 7 * DAY).toISOString() })
  })
  const signedWithSet = await longToken()

  await t.test('tokens signed before each rotation keep working', async (t) => {
    for (const token of [signedWithDefault, signedWithGenerated, signedWithSet]) {
      t.equal((await call(app, 'GET', '/me', { token })).status, 200, String(kidOf(token)))
    }
  })

  await t.test('clear: back to the default kid, the former secret honoured 7 days', async (t) => {
    clock.advance(DAY)
    const setKid = kidOf(signedWithSet)
    const res = await call(app, 'POST', '/tenants/me/jwt-secret/clear', admin, {})
    t.equal(res.status, 200)
    t.equal(res.body.data.configured, false)
    t.equal(res.body.data.kid, 'default')
    t.equal(res.body.data.secret, null)
    t.equal(res.body.data.previous.kid, setKid)
    const again = await call(app, 'POST', '/tenants/me/jwt-secret/clear', admin)
    t.same(again.body.data, res.body.data, 'clearing twice changes nothing')
    const fresh = await login(app, tenant.code, adminUser.email)
    t.equal(kidOf(fresh.body.data.accessToken), 'default')
    t.equal((await call(app, 'GET', '/me', { token: signedWithSet })).status, 200)
  })

  await t.test(
    'past the overlap a token signed with a retired secret is refused (401, not expired)',
    async (t) => {
      // `generate` at day 0, `set` at day 1 (retiring the generated secret until day 8), `clear` at day 2
      // (retiring the set one until day 9); the default is current again. Now: day 8 and a minute.
      clock.advance(6 * DAY + 60_000)
      const gone = await call(app, 'GET', '/me', { token: signedWithGenerated })
      t.equal(gone.status, 401)
      t.equal(gone.body.code, 'UNAUTHORIZED')
      t.equal((await call(app, 'GET', '/me', { token: signedWithSet })).status, 200, 'set + 7 d not reached')
      t.equal(
        (await call(app, 'GET', '/me', { token: signedWithDefault })).status,
        200,
        'default is current again',
      )
      clock.advance(DAY)
      t.equal((await call(app, 'GET', '/me', { token: signedWithSet })).status, 401)
      const state = await call(app, 'GET', '/tenants/me/jwt-secret', { token: await longToken() })
      t.equal(state.body.data.previous, null, 'no previous once its overlap ended')
    },
  )

  await t.test('rotation is recorded in tenant metadata, not in the audit log', async (t) => {
    const row = await app.ctx.dbs.main
      .selectFrom('tenants')
      .select('metadata')
      .where('id', '=', tenant.id)
      .executeTakeFirstOrThrow()
    const history = (row.metadata as { jwtSecret: { history: { action: string }[] } }).jwtSecret.history
    t.same(
      history.map((h) => h.action),
      ['generate', 'set', 'clear'],
    )
    const audit = await app.ctx.dbs.main
      .selectFrom('audit_log')
      .select('action')
      .where('tenant_id', '=', tenant.id)
      .where('action', '!=', 'LOGIN')
      .execute()
    t.equal(audit.length, 0)
  })
})

t.test('signing secret: the default stops verifying 7 days after the first rotation', async (t) => {
  const clock = createManualClock()
  const app = await buildTestApp(t, {}, { clock })
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant, { roles: ['admin'] })
  const before = await tokenFor(app, user, 30 * 24 * 3600)
  t.equal((await call(app, 'POST', '/tenants/me/jwt-secret/generate', { token: before })).status, 200)
  clock.advance(7 * DAY - 60_000)
  t.equal((await call(app, 'GET', '/me', { token: before })).status, 200)
  clock.advance(120_000)
  const res = await call(app, 'GET', '/me', { token: before })
  t.equal(res.status, 401)
  t.equal(res.body.code, 'UNAUTHORIZED')
})

t.test('signing secret: one tenant’s secret never verifies another tenant’s claims', async (t) => {
  const app = await buildTestApp(t)
  const a = await createTenant(app)
  const b = await createTenant(app)
  const { user: ua } = await userWithToken(app, a)
  const { as: adminB } = await userWithToken(app, b)
  const bState = (await call(app, 'POST', '/tenants/me/jwt-secret/generate', adminB)).body.data
  const now = Math.floor(Date.now() / 1000)
  const forged = signJwt(
    {
      sub: ua.id,
      userId: ua.id,
      tenantId: a.id,
      tenantCode: a.code,
      roles: ['admin'],
      permissions: ['users:read'],
      sid: ua.id,
      iat: now,
      exp: now + 600,
      jti: 'x',
    },
    Buffer.from(bState.secret, 'utf8'),
    bState.kid,
  )
  const res = await call(app, 'GET', '/me', { token: forged })
  t.equal(res.status, 401)
  t.equal(res.body.code, 'UNAUTHORIZED')
})

t.test('signing secret endpoints: permissions and credentials', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const { as: plain } = await userWithToken(app, tenant, ['user'])
  const { as: reader } = await userWithToken(app, tenant, ['user'], { permissions: ['tenants:read'] })
  const key = await createKey(app, tenant, ['tenants:read', 'tenants:update'])

  t.equal((await call(app, 'GET', '/tenants/me/jwt-secret', plain)).status, 403)
  t.equal((await call(app, 'GET', '/tenants/me/jwt-secret', reader)).status, 200)
  const denied = await call(app, 'POST', '/tenants/me/jwt-secret/generate', reader)
  t.equal(denied.status, 403)
  t.equal(denied.body.code, 'FORBIDDEN')
  const byKey = await call(app, 'POST', '/tenants/me/jwt-secret/generate', { key: key.value })
  t.equal(byKey.status, 401, 'JWT only')
  const { as: admin } = await userWithToken(app, tenant)
  const withBody = await call(app, 'POST', '/tenants/me/jwt-secret/generate', admin, { extra: 1 })
  t.equal(withBody.status, 400)
})
