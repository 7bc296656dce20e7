import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { createKey, createTenant, createUser, tokenFor, userWithToken } from '../helpers/fixtures.js'
import { createManualClock } from '../../src/lib/clock.js'
import { decodeJwtUnverified, signJwt, verifyJwtSignature } from '../../src/lib/jwt.js'
import { decryptSecret, deriveKey } from '../../src/lib/crypto-box.js'
import { call, detailPaths, login, unchecked } from '../helpers/call.js'

const DAY = 24 * 60 * 60 * 1000
// The service default secret of every test app (test/helpers/app.ts).
const DEFAULT_SECRET = 'test-default-jwt-secret-0123456789abcdef'
const kidOf = (token: string) => decodeJwtUnverified(token)?.header.kid

t.test(
  'generateJwtSecret, getJwtSecret, setJwtSecret, clearJwtSecret: the signing secret with its 7-day overlap',
  async (t) => {
    const clock = createManualClock()
    const app = await buildTestApp(t, {}, { clock })
    const tenant = await createTenant(app)
    const adminUser = await createUser(app, tenant, { roles: ['admin'] })
    // Tokens live a day at most, and the overlap is 7: a token is re-signed with the secret of its kid at
    // the moment it is checked, so a refusal is the secret's doing, never `exp`.
    const secrets = new Map<string | null, string>([['default', DEFAULT_SECRET]])
    const resign = (token: string): string => {
      const d = decodeJwtUnverified(token)
      const kid = String(d?.header.kid)
      const iat = Math.floor(clock.now() / 1000)
      return signJwt({ ...d?.payload, iat, exp: iat + 900 }, secrets.get(kid) ?? 'unknown', kid)
    }
    const admin = { token: await tokenFor(app, adminUser) }
    const freshAdmin = async () => (admin.token = await tokenFor(app, adminUser))
    const signedWithDefault = admin.token

    const initial = await call(app, 'getJwtSecret', admin)
    t.equal(initial.status, 200)
    t.same(initial.body.data, {
      configured: false,
      kid: 'default',
      secret: null,
      createdAt: null,
      previous: null,
    })
    t.equal(kidOf(signedWithDefault), 'default')

    const gen = await call(app, 'generateJwtSecret', admin)
    t.equal(gen.status, 200)
    const g = gen.body.data
    secrets.set(g.kid, g.secret!)
    t.equal(g.configured, true)
    t.match(g.secret, /^[A-Za-z0-9_-]{43}$/)
    t.not(g.kid, 'default')
    t.equal(g.previous?.kid, 'default')
    t.equal(Date.parse(g.previous!.expiresAt), clock.now() + 7 * DAY)
    t.same((await call(app, 'getJwtSecret', admin)).body.data, g, 'GET shows the same state')

    await t.test('new tokens carry the new kid and verify with the shown secret', async (t) => {
      const res = await login(app, tenant.code, adminUser.email)
      t.equal(res.status, 200)
      t.equal(kidOf(res.body.data.accessToken), g.kid)
      t.ok(verifyJwtSignature(res.body.data.accessToken, Buffer.from(g.secret!, 'utf8')))
      t.equal((await call(app, 'getMe', { token: res.body.data.accessToken })).status, 200)
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

    const signedWithGenerated = await tokenFor(app, adminUser)
    t.equal(kidOf(signedWithGenerated), g.kid)
    let signedWithSet = ''

    await t.test(
      'setJwtSecret: 400 under 32 bytes, one character repeated, control characters',
      async (t) => {
        for (const [name, secret] of [
          ['31 bytes', 'x'.repeat(30) + 'y'],
          ['15 two-byte characters (30 bytes)', 'é'.repeat(14) + 'ü'],
          ['32 spaces', ' '.repeat(32)],
          ['32 NULs', '\u0000'.repeat(32)],
          ['one character repeated', 'a'.repeat(40)],
          ['a control character inside', 'a-tenant-chosen-secret\nof-enough-bytes'],
          ['DEL inside', 'a-tenant-chosen-secret\u007fof-enough-bytes'],
        ] as const) {
          const res = await call(app, 'setJwtSecret', admin, { body: { secret } })
          t.equal(res.status, 400, name)
          t.equal(res.body.code, 'VALIDATION_ERROR', name)
          t.equal(detailPaths(res)[0], 'body.secret', name)
        }
        t.equal((await call(app, 'getJwtSecret', admin)).body.data.kid, g.kid, 'nothing rotated')
      },
    )

    await t.test('setJwtSecret: 32 bytes in 16 two-byte characters are enough', async (t) => {
      clock.advance(DAY)
      await freshAdmin()
      const secret = 'éüöäñçàèìòùâêîôû' // 16 characters, 32 bytes
      const res = await call(app, 'setJwtSecret', admin, { body: { secret } })
      t.equal(res.status, 200)
      t.equal(res.body.data.secret, secret)
      t.not(res.body.data.kid, g.kid)
      t.same(res.body.data.previous, { kid: g.kid, expiresAt: new Date(clock.now() + 7 * DAY).toISOString() })
      secrets.set(res.body.data.kid, secret)
      signedWithSet = await tokenFor(app, adminUser)
      t.equal(kidOf(signedWithSet), res.body.data.kid)
    })

    await t.test('only the current and the one previous secret verify, remembered tokens too', async (t) => {
      t.equal((await call(app, 'getMe', { token: signedWithSet })).status, 200, 'current')
      t.equal((await call(app, 'getMe', { token: resign(signedWithGenerated) })).status, 200, 'previous')
      const old = await call(app, 'getMe', { token: resign(signedWithDefault) })
      t.equal(old.status, 401, 'two rotations back: refused at once, its 7 days notwithstanding')
      t.equal(old.body.code, 'UNAUTHORIZED')
      // A token verified (and remembered) while its secret was the previous one, refused after a rotation.
      const remembered = resign(signedWithGenerated)
      t.equal((await call(app, 'getMe', { token: remembered })).status, 200)
      const res = await call(app, 'generateJwtSecret', admin)
      secrets.set(res.body.data.kid, res.body.data.secret!)
      t.equal((await call(app, 'getMe', { token: remembered })).status, 401, 'the remembered path too')
      await freshAdmin()
      const back = await call(app, 'setJwtSecret', admin, {
        body: {
          secret: secrets.get(kidOf(signedWithSet) as string)!,
        },
      })
      t.equal(back.status, 200, 'set again: a new kid for a known secret')
      secrets.set(back.body.data.kid, back.body.data.secret!)
      signedWithSet = await tokenFor(app, adminUser)
      await freshAdmin()
    })

    await t.test(
      'clearJwtSecret: back to the default kid, the former secret honoured 7 days, older ones not',
      async (t) => {
        clock.advance(DAY)
        await freshAdmin()
        const setKid = kidOf(signedWithSet)
        const res = await call(app, 'clearJwtSecret', admin, { body: {} })
        t.equal(res.status, 200)
        t.equal(res.body.data.configured, false)
        t.equal(res.body.data.kid, 'default')
        t.equal(res.body.data.secret, null)
        t.equal(res.body.data.previous?.kid, setKid)
        const again = await call(app, 'clearJwtSecret', admin)
        t.same(again.body.data, res.body.data, 'clearing twice changes nothing')
        const fresh = await login(app, tenant.code, adminUser.email)
        t.equal(kidOf(fresh.body.data.accessToken), 'default')
        t.equal((await call(app, 'getMe', { token: resign(signedWithSet) })).status, 200, 'previous')
        t.equal((await call(app, 'getMe', { token: resign(signedWithGenerated) })).status, 401, 'older')
        t.equal((await call(app, 'getMe', { token: resign(signedWithDefault) })).status, 200, 'current')
        const rows = await app.ctx.dbs.main
          .selectFrom('tenant_secrets')
          .select('kid')
          .where('tenant_id', '=', tenant.id)
          .execute()
        t.same(
          rows.map((r) => r.kid),
          [setKid],
          'only the previous secret is kept',
        )
      },
    )

    await t.test('past the overlap the previous secret is refused too (401, not expired)', async (t) => {
      clock.advance(7 * DAY + 60_000)
      await freshAdmin()
      const gone = await call(app, 'getMe', { token: resign(signedWithSet) })
      t.equal(gone.status, 401)
      t.equal(gone.body.code, 'UNAUTHORIZED')
      const state = await call(app, 'getJwtSecret', admin)
      t.equal(state.body.data.previous, null, 'no previous once its overlap ended')
    })

    await t.test('rotation is recorded in tenant metadata, not in the audit log', async (t) => {
      const row = await app.ctx.dbs.main
        .selectFrom('tenants')
        .select('metadata')
        .where('id', '=', tenant.id)
        .executeTakeFirstOrThrow()
      const history = (row.metadata as { jwtSecret: { history: { action: string }[] } }).jwtSecret.history
      t.same(
        history.map((h) => h.action),
        ['generate', 'set', 'generate', 'set', 'clear'],
      )
      const audit = await app.ctx.dbs.main
        .selectFrom('tessera_audit.audit_log')
        .select('action')
        .where('tenant_id', '=', tenant.id)
        .where('action', '!=', 'LOGIN')
        .execute()
      t.equal(audit.length, 0)
    })
  },
)

t.test('generateJwtSecret: the default secret stops verifying 7 days after the first rotation', async (t) => {
  const clock = createManualClock()
  const app = await buildTestApp(t, {}, { clock })
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant, { roles: ['admin'] })
  const before = await tokenFor(app, user)
  t.equal((await call(app, 'generateJwtSecret', { token: before })).status, 200)
  const withDefault = () => {
    const d = decodeJwtUnverified(before)
    const iat = Math.floor(clock.now() / 1000)
    return signJwt({ ...d?.payload, iat, exp: iat + 900 }, DEFAULT_SECRET, 'default')
  }
  clock.advance(7 * DAY - 60_000)
  t.equal((await call(app, 'getMe', { token: withDefault() })).status, 200)
  clock.advance(120_000)
  const res = await call(app, 'getMe', { token: withDefault() })
  t.equal(res.status, 401)
  t.equal(res.body.code, 'UNAUTHORIZED')
})

t.test('generateJwtSecret: one tenant’s secret never verifies another tenant’s claims', async (t) => {
  const app = await buildTestApp(t)
  const a = await createTenant(app)
  const b = await createTenant(app)
  const ua = await userWithToken(app, a, { roles: ['admin'] })
  const { cred: adminB } = await userWithToken(app, b, { roles: ['admin'] })
  const bState = (await call(app, 'generateJwtSecret', adminB)).body.data
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
    Buffer.from(bState.secret!, 'utf8'),
    bState.kid!,
  )
  const res = await call(app, 'getMe', { token: forged })
  t.equal(res.status, 401)
  t.equal(res.body.code, 'UNAUTHORIZED')
})

t.test('getJwtSecret, generateJwtSecret: permissions and credentials', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const { cred: plain } = await userWithToken(app, tenant, { roles: ['user'] })
  const { cred: reader } = await userWithToken(app, tenant, {
    roles: ['user'],
    permissions: ['tenants:read'],
  })
  const key = await createKey(app, tenant, ['tenants:read', 'tenants:update'])

  t.equal((await call(app, 'getJwtSecret', plain)).status, 403)
  t.equal((await call(app, 'getJwtSecret', reader)).status, 200)
  const denied = await call(app, 'generateJwtSecret', reader)
  t.equal(denied.status, 403)
  t.equal(denied.body.code, 'FORBIDDEN')
  const byKey = await call(app, 'generateJwtSecret', { key: key.value })
  t.equal(byKey.status, 401, 'JWT only')
  const { cred: admin } = await userWithToken(app, tenant, { roles: ['admin'] })
  const withBody = await call(app, 'generateJwtSecret', admin, { body: unchecked({ extra: 1 }) })
  t.equal(withBody.status, 400)
})
