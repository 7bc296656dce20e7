import t from 'tap'
import { createManualClock } from '../../src/lib/clock.js'
import { signJwt } from '../../src/lib/jwt.js'
import { buildTestApp } from '../helpers/app.js'
import { call, loginTokens, logoutWith, newClientKey, type As } from '../helpers/call.js'
import {
  auditRows,
  createTenant,
  createUser,
  keyCred,
  sidOf,
  userWithToken,
  type TenantFx,
  type UserFx,
} from '../helpers/fixtures.js'

// Contract section 26, "a recent sign-in is a real one": the check of section 22 takes a token's `auth_time`
// only when its `sid` names a live session of that user, opened at that time. Whoever holds the tenant's
// HS256 secret can sign any claims, a fresh `auth_time` included, but cannot open a session; and the secret
// operations themselves need a recent sign-in, so a stolen token cannot fetch the secret in the first place.
// Also section 26's "Also": moving the mailed links (`email.resetUrl`, `email.verifyUrl`) needs a recent
// sign-in, and every PATCH /tenants/{id}/config writes one TENANT_CONFIG_UPDATE row (section 25).

const clock = createManualClock()
const app = await buildTestApp(t, {}, { clock })
const nowS = () => Math.floor(clock.now() / 1000)

/** An HS256 access token for `user` signed with the tenant's secret, with the claims given. */
function mint(
  user: UserFx,
  secret: { secret: string; kid: string },
  claims: { sid: string; auth_time?: number; permissions?: string[] },
): string {
  const iat = nowS()
  return signJwt(
    {
      sub: user.id,
      userId: user.id,
      tenantId: user.tenant.id,
      tenantCode: user.tenant.code,
      email: user.email,
      username: null,
      roles: ['admin'],
      permissions: claims.permissions ?? ['client-keys:create', 'users:read'],
      sid: claims.sid,
      ...(claims.auth_time === undefined ? {} : { auth_time: claims.auth_time }),
      iat,
      exp: iat + 600,
      jti: '00000000-0000-4000-8000-0000000000aa',
    },
    secret.secret,
    secret.kid,
  )
}

/** Generates the tenant's secret with a fresh admin sign-in; returns it with its kid. */
async function tenantSecret(tenant: TenantFx): Promise<{ secret: string; kid: string }> {
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const gen = await call(app, 'generateJwtSecret', admin.cred)
  if (gen.status !== 200) throw new Error(`generate: ${gen.raw}`)
  return { secret: gen.data.secret as string, kid: gen.data.kid as string }
}

const createKeyWith = (as: As) =>
  call(app, 'createClientKey', as, { body: { name: 'minted', scopes: ['users:read'] } })

t.test(
  'createClientKey: 401 REAUTHENTICATION_REQUIRED for a token minted with the tenant secret and a fresh auth_time but no session',
  async (t) => {
    const tenant = await createTenant(app)
    const secret = await tenantSecret(tenant)
    const victim = await createUser(app, tenant, { roles: ['admin'] })
    const forged = mint(victim, secret, { sid: '00000000-0000-4000-8000-000000000001', auth_time: nowS() })
    t.equal((await call(app, 'getMe', { token: forged })).status, 200, 'the token itself is valid')
    const res = await createKeyWith({ token: forged })
    t.equal(res.status, 401)
    t.equal(res.code, 'REAUTHENTICATION_REQUIRED')
    const malformedSid = mint(victim, secret, { sid: 'not-a-session-id', auth_time: nowS() })
    t.equal((await createKeyWith({ token: malformedSid })).code, 'REAUTHENTICATION_REQUIRED')
  },
)

t.test(
  'createClientKey: a minted token naming a real session is refused unless its auth_time is that session’s login',
  async (t) => {
    const tenant = await createTenant(app)
    const secret = await tenantSecret(tenant)
    const user = await createUser(app, tenant, { roles: ['admin'] })
    const loginAt = nowS()
    const tokens = await loginTokens(app, user)
    const sid = sidOf(tokens.accessToken)
    clock.advance(700_000)
    const stale = await createKeyWith({ token: tokens.accessToken })
    t.equal(stale.code, 'REAUTHENTICATION_REQUIRED', 'the genuine token of that sign-in is stale now')
    const renewed = mint(user, secret, { sid, auth_time: nowS() })
    t.equal((await createKeyWith({ token: renewed })).code, 'REAUTHENTICATION_REQUIRED', 'a new auth_time')
    clock.set((loginAt + 5) * 1000)
    const exact = mint(user, secret, { sid, auth_time: loginAt })
    t.equal((await createKeyWith({ token: exact })).status, 201, 'the session’s own login time counts')
  },
)

t.test('createClientKey: 401 REAUTHENTICATION_REQUIRED when the sid names a revoked session', async (t) => {
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant, { roles: ['admin'] })
  const tokens = await loginTokens(app, user)
  t.equal((await logoutWith(app, tokens.accessToken, tokens.refreshToken)).status, 200)
  const res = await createKeyWith({ token: tokens.accessToken })
  t.equal(res.status, 401)
  t.equal(res.code, 'REAUTHENTICATION_REQUIRED')
})

t.test(
  'createClientKey: 401 REAUTHENTICATION_REQUIRED when the sid names another user’s session',
  async (t) => {
    const tenant = await createTenant(app)
    const secret = await tenantSecret(tenant)
    const attacker = await createUser(app, tenant, { roles: ['user'] })
    const victim = await createUser(app, tenant, { roles: ['admin'] })
    const loginAt = nowS()
    const own = await loginTokens(app, attacker)
    const forged = mint(victim, secret, { sid: sidOf(own.accessToken), auth_time: loginAt })
    t.equal((await createKeyWith({ token: forged })).code, 'REAUTHENTICATION_REQUIRED')
  },
)

t.test(
  'getJwtSecret, generateJwtSecret, setJwtSecret, clearJwtSecret, rotateSigningKey: 401 REAUTHENTICATION_REQUIRED for a stale sign-in',
  async (t) => {
    const tenant = await createTenant(app)
    const stale = await userWithToken(app, tenant, { roles: ['admin'], authTime: nowS() - 601 })
    const fresh = await userWithToken(app, tenant, { roles: ['admin'] })
    const before = await call(app, 'getJwtSecret', fresh.cred)
    t.equal(before.status, 200)
    const refused = [
      await call(app, 'getJwtSecret', stale.cred),
      await call(app, 'generateJwtSecret', stale.cred),
      await call(app, 'setJwtSecret', stale.cred, { body: { secret: 'x'.repeat(43) } }),
      await call(app, 'clearJwtSecret', stale.cred),
      await call(app, 'rotateSigningKey', stale.cred),
    ]
    t.same(
      refused.map((r) => [r.status, r.code]),
      refused.map(() => [401, 'REAUTHENTICATION_REQUIRED']),
    )
    t.same((await call(app, 'getJwtSecret', fresh.cred)).data, before.data, 'nothing changed')
    const noAuthTime = await userWithToken(app, tenant, { roles: ['admin'], authTime: null })
    t.equal((await call(app, 'generateJwtSecret', noAuthTime.cred)).code, 'REAUTHENTICATION_REQUIRED')
    t.equal((await call(app, 'rotateSigningKey', fresh.cred)).status, 200, 'a fresh sign-in rotates')
  },
)

t.test(
  'updateTenantConfig: moving a mailed link needs a recent sign-in; one TENANT_CONFIG_UPDATE row',
  async (t) => {
    const tenant = await createTenant(app)
    const stale = await userWithToken(app, tenant, { roles: ['admin'], authTime: nowS() - 601 })
    const fresh = await userWithToken(app, tenant, { roles: ['admin'] })
    const patch = (as: As, body: Record<string, unknown>) =>
      call(app, 'updateTenantConfig', as, { params: { id: tenant.id }, body })
    const evil = { email: { resetUrl: 'https://collector.example/reset?t={token}' } }

    const refused = await patch(stale.cred, evil)
    t.equal(refused.status, 401)
    t.equal(refused.code, 'REAUTHENTICATION_REQUIRED')
    const verify = await patch(stale.cred, {
      email: { verifyUrl: 'https://collector.example/verify?t={token}' },
    })
    t.equal(verify.code, 'REAUTHENTICATION_REQUIRED')
    const config = await call(app, 'getMyTenantConfig', fresh.cred)
    t.equal(config.data.email.resetUrl, null, 'nothing changed')

    const other = await patch(stale.cred, { accessTokenExpiresIn: 600 })
    t.equal(other.status, 200, 'other settings need no recent sign-in')
    const ok = await patch(fresh.cred, evil)
    t.equal(ok.status, 200)
    t.equal(ok.data.email.resetUrl, 'https://collector.example/reset?t={token}')
    t.equal((await patch(stale.cred, evil)).status, 200, 'setting the same link again moves nothing')

    const rows = await auditRows(app, tenant.id, 'TENANT_CONFIG_UPDATE')
    t.same(
      rows.map((r) => [r.success, r.error_message]),
      [
        [false, 'REAUTHENTICATION_REQUIRED'],
        [false, 'REAUTHENTICATION_REQUIRED'],
        [true, null],
        [true, null],
        [true, null],
      ],
    )
    const last = rows[3]
    t.same(last?.metadata, { target: { type: 'tenant', id: tenant.id }, changed: ['email'] })
    t.equal(last?.actor_id, fresh.id)
    t.notMatch(JSON.stringify(rows), /collector/, 'no value in any row')
  },
)

t.test(
  'updateTenantConfig: a refused call writes its failure row; another tenant’s id has none there',
  async (t) => {
    const tenant = await createTenant(app)
    const other = await createTenant(app)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const res = await call(app, 'updateTenantConfig', admin.cred, {
      params: { id: other.id },
      body: { accessTokenExpiresIn: 600 },
    })
    t.equal(res.code, 'TENANT_NOT_FOUND')
    const own = await auditRows(app, tenant.id, 'TENANT_CONFIG_UPDATE')
    t.same(
      own.map((r) => [r.success, r.error_message]),
      [[false, 'TENANT_NOT_FOUND']],
    )
    t.same(await auditRows(app, other.id, 'TENANT_CONFIG_UPDATE'), [], 'nothing in the other tenant’s log')
  },
)

t.test(
  'updateTenantConfig: 403 FORBIDDEN for a Client Key made by a user moving a mailed link; an operator’s key may',
  async (t) => {
    const tenant = await createTenant(app)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const made = await newClientKey(app, admin.cred, { name: 'config', scopes: ['tenants:update'] })
    const patch = (as: As, resetUrl: string) =>
      call(app, 'updateTenantConfig', as, { params: { id: tenant.id }, body: { email: { resetUrl } } })
    const refused = await patch({ key: made.key }, 'https://collector.example/r?t={token}')
    t.equal(refused.status, 403)
    t.equal(refused.code, 'FORBIDDEN')
    const other = await call(
      app,
      'updateTenantConfig',
      { key: made.key },
      {
        params: { id: tenant.id },
        body: { accessTokenExpiresIn: 600 },
      },
    )
    t.equal(other.status, 200, 'the key changes the other settings')
    const operators = await keyCred(app, tenant, ['tenants:update'])
    const ok = await patch(operators, 'https://links.example/r?t={token}')
    t.equal(ok.status, 200, 'a key no user stands behind (the operator’s) moves them')
    t.equal(ok.data.email.resetUrl, 'https://links.example/r?t={token}')
  },
)
