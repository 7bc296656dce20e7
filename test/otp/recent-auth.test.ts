import t from 'tap'
import { createManualClock } from '../../src/lib/clock.js'
import { signJwt } from '../../src/lib/jwt.js'
import { buildTestApp } from '../helpers/app.js'
import { call, login, loginTokens, refresh, type As } from '../helpers/call.js'
import { createTenant, createUser, userWithToken, type TenantFx } from '../helpers/fixtures.js'
import { secretOfUri, totpAt } from '../helpers/totp.js'

// Contract section 22, "recent sign-in for sensitive acts": access tokens carry `auth_time` (the login that
// opened the session, kept across refreshes), and the second-factor operations of /me/otp refuse a token
// whose sign-in is more than 600 s old, or that has none, with 401 REAUTHENTICATION_REQUIRED. A stolen
// access token alone therefore cannot enroll (or renew, or remove) a second factor. (POST /client-keys is
// in test/client-keys/creators.test.ts.)

const clock = createManualClock()
const app = await buildTestApp(t, {}, { clock })
const STEP_MS = 30_000

const nowS = () => Math.floor(clock.now() / 1000)
const setup = (as: As) => call(app, 'setupMyOtp', as)
const confirm = (as: As, code: string) => call(app, 'confirmMyOtp', as, { body: { code } })
const renew = (as: As, code: string) => call(app, 'renewMyRecoveryCodes', as, { body: { code } })
const disable = (as: As, code: string) => call(app, 'disableMyOtp', as, { body: { code } })
const claimsOf = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>

/** The authenticator's code at the next step: never a step already used. */
function nextCode(key: Buffer): string {
  clock.advance(STEP_MS)
  return totpAt(key, clock.now())
}

/** Enrolls `as`'s user (setup, then confirm); returns the authenticator's key. */
async function enroll(as: As): Promise<Buffer> {
  const s = await setup(as)
  if (s.status !== 200) throw new Error(`setup: ${s.raw}`)
  const key = secretOfUri(s.data.otpauthUri as string)
  const c = await confirm(as, nextCode(key))
  if (c.status !== 200) throw new Error(`confirm: ${c.raw}`)
  return key
}

const otpRows = (tenant: TenantFx, userId: string) =>
  app.ctx.dbs.forTenant(tenant.id).selectFrom('user_otp').selectAll().where('user_id', '=', userId).execute()

t.test(
  'setupMyOtp, confirmMyOtp: 401 REAUTHENTICATION_REQUIRED for a stolen token of an old sign-in; nothing is enrolled',
  async (t) => {
    const tenant = await createTenant(app)
    const victim = await userWithToken(app, tenant, { roles: ['user'], authTime: nowS() - 601 })
    const s = await setup(victim.cred)
    t.equal(s.status, 401)
    t.equal(s.code, 'REAUTHENTICATION_REQUIRED')
    const c = await confirm(victim.cred, '123456')
    t.equal(c.code, 'REAUTHENTICATION_REQUIRED')
    t.same(await otpRows(tenant, victim.id), [], 'no pending secret was stored')
    const status = await call(app, 'getMyOtp', victim.cred)
    t.equal(status.status, 200, 'everything else takes the token as before')
    t.equal(
      (await login(app, tenant.code, victim.email)).status,
      200,
      'the victim still logs in without a code',
    )
  },
)

t.test(
  'renewMyRecoveryCodes, disableMyOtp: 401 REAUTHENTICATION_REQUIRED for an old sign-in, even with a right code',
  async (t) => {
    const tenant = await createTenant(app)
    const user = await userWithToken(app, tenant, { roles: ['user'] })
    const key = await enroll(user.cred)
    clock.advance(601_000 - STEP_MS)
    const r = await renew(user.cred, nextCode(key))
    t.equal(r.status, 401)
    t.equal(r.code, 'REAUTHENTICATION_REQUIRED')
    const d = await disable(user.cred, nextCode(key))
    t.equal(d.code, 'REAUTHENTICATION_REQUIRED')
    t.equal((await otpRows(tenant, user.id)).length, 1, 'the factor stays')
  },
)

t.test('setupMyOtp: 401 REAUTHENTICATION_REQUIRED for a token without auth_time', async (t) => {
  const tenant = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const gen = await call(app, 'generateJwtSecret', admin.cred)
  t.equal(gen.status, 200)
  // As whoever reads the tenant's secret could mint it: valid in every way, but no sign-in behind it.
  const user = await createUser(app, tenant, { roles: ['user'] })
  const iat = nowS()
  const minted = signJwt(
    {
      sub: user.id,
      userId: user.id,
      tenantId: tenant.id,
      tenantCode: tenant.code,
      email: user.email,
      username: null,
      roles: ['user'],
      permissions: [],
      sid: '00000000-0000-4000-8000-000000000001',
      iat,
      exp: iat + 600,
      jti: '00000000-0000-4000-8000-000000000002',
    },
    gen.data.secret as string,
    gen.data.kid as string,
  )
  t.equal((await call(app, 'getMyOtp', { token: minted })).status, 200, 'the token is valid')
  const res = await setup({ token: minted })
  t.equal(res.status, 401)
  t.equal(res.code, 'REAUTHENTICATION_REQUIRED')
  const fixture = await userWithToken(app, tenant, { roles: ['user'], authTime: null })
  t.equal((await setup(fixture.cred)).code, 'REAUTHENTICATION_REQUIRED', 'nor one of ours without it')
})

t.test(
  'refresh: auth_time is the login’s, kept across refreshes; 600 s after the login the refreshed token is refused',
  async (t) => {
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant, { roles: ['user'] })
    const loginAt = nowS()
    const first = await loginTokens(app, user)
    t.equal(claimsOf(first.accessToken).auth_time, loginAt, 'auth_time is the login time')
    const key = await enroll({ token: first.accessToken })

    clock.advance(300_000)
    const r1 = await refresh(app, first.refreshToken)
    t.equal(r1.status, 200)
    const c1 = claimsOf(r1.data.accessToken as string)
    t.equal(c1.auth_time, loginAt, 'a refresh keeps it')
    t.ok((c1.iat as number) > loginAt, 'while iat moves on')
    t.equal(
      (await renew({ token: r1.data.accessToken as string }, nextCode(key))).status,
      200,
      'still recent',
    )

    clock.advance(601_000 - 300_000 - STEP_MS)
    const r2 = await refresh(app, r1.data.refreshToken as string)
    t.equal(claimsOf(r2.data.accessToken as string).auth_time, loginAt, 'kept again')
    const refreshed: As = { token: r2.data.accessToken as string }
    const validated = await call(app, 'validateToken', refreshed)
    t.equal(validated.data.claims.auth_time, loginAt, '/validate shows it')
    t.equal(
      (await renew(refreshed, nextCode(key))).code,
      'REAUTHENTICATION_REQUIRED',
      'a fresh token, an old sign-in',
    )
    t.equal((await disable(refreshed, nextCode(key))).code, 'REAUTHENTICATION_REQUIRED')
    t.equal((await setup(refreshed)).code, 'REAUTHENTICATION_REQUIRED', 'refused before OTP_ALREADY_ENABLED')

    const again = await loginTokens(app, user, { otp: nextCode(key) })
    t.equal(claimsOf(again.accessToken).auth_time, nowS(), 'a new login gives a fresh sign-in')
    const off = await disable({ token: again.accessToken }, nextCode(key))
    t.equal(off.status, 200, 'which may remove the factor')
  },
)

t.test('login: an EdDSA tenant’s tokens carry auth_time too, kept across a refresh', async (t) => {
  const tenant = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const sw = await call(app, 'updateTenantConfig', admin.cred, {
    params: { id: tenant.id },
    body: {
      signingAlgorithm: 'EdDSA',
    },
  })
  t.equal(sw.status, 200)
  const loginAt = nowS()
  const first = await loginTokens(app, admin)
  t.equal(JSON.parse(Buffer.from(first.accessToken.split('.')[0] ?? '', 'base64url').toString()).alg, 'EdDSA')
  t.equal(claimsOf(first.accessToken).auth_time, loginAt)
  clock.advance(700_000)
  const r = await refresh(app, first.refreshToken)
  t.equal(claimsOf(r.data.accessToken as string).auth_time, loginAt)
  t.equal((await setup({ token: r.data.accessToken as string })).code, 'REAUTHENTICATION_REQUIRED')
})
