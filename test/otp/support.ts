// Shared by the second factor's tests: the login with a second factor (login-otp-*.test.ts) and the
// enrollment under /me/otp (enrollment-*.test.ts). Each builds its app on a manual clock (one a file,
// at its top level) and gets the helpers bound to it. Codes are computed by test/helpers/totp.ts from
// the otpauthUri the API returned, as an authenticator app would.
import { buildTestApp, type TestLike } from '../helpers/app.js'
import { call, loginAs, mfaTokenIn, type As, type BodyOf, type Res } from '../helpers/call.js'
import type { FastifyInstance } from 'fastify'
import { auditRows, createTenant, createUser, userRow, userWithToken } from '../helpers/fixtures.js'
import type { TenantFx, UserFx } from '../helpers/fixtures.js'
import { enrollThroughMe } from '../helpers/secret-budget.js'
import { secretOfUri, totpAt } from '../helpers/totp.js'
import { createManualClock } from '../../src/lib/clock.js'

export const STEP_MS = 30_000
export const MFA_TOKEN = /^[A-Za-z0-9_-]{64}$/
export const LOCKOUT = { enabled: true, threshold: 3, windowSeconds: 60, baseSeconds: 60, maxSeconds: 120 }
export const PENDING_MS = 10 * 60 * 1000
export const RECOVERY_SHAPE = /^[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}$/
export const NOT_ENROLLED = {
  otpEnabled: false,
  enrolled: false,
  pendingSetup: false,
  recoveryCodesLeft: 0,
  requiredByTenant: false,
}

interface Enrolled {
  key: Buffer
  secret: string
  recoveryCodes: string[]
}

/** The user's recovery codes (their rows, used or not), straight from the database. */
export function recoveryRows(app: FastifyInstance, user: UserFx) {
  return app.ctx.dbs
    .forTenant(user.tenant.id)
    .selectFrom('otp_recovery_codes')
    .selectAll()
    .where('tenant_id', '=', user.tenant.id)
    .where('user_id', '=', user.id)
    .execute()
}

/** A regular expression that finds `text` in a log, not as a part of a longer run of digits. */
export function standalone(text: string): RegExp {
  return new RegExp(`(?<![0-9.])${text.replace(/[^A-Za-z0-9]/g, '\\$&')}(?![0-9])`)
}

/**
 * The app of a login-otp file (LOG_LEVEL debug, every log line kept in `logLines`) on a manual clock, and
 * the login's second step bound to it: OTP_REQUIRED / OTP_ENROLLMENT_REQUIRED, the mfaToken, the codes.
 */
export async function loginOtpApp(t: TestLike) {
  const clock = createManualClock()
  const logLines: string[] = []
  const app = await buildTestApp(
    t,
    { LOG_LEVEL: 'debug' },
    { clock, logStream: { write: (l: string) => void logLines.push(l) } },
  )

  /** Enrolls the user through /me/otp (setup, confirm), then moves the clock one step on. */
  function enroll(user: UserFx): Promise<Enrolled> {
    return enrollThroughMe(app, clock, user)
  }

  /** The code of the user's authenticator now, `drift` steps away. */
  const codeOf = (e: { key: Buffer }, drift = 0) => totpAt(e.key, clock.now(), drift)

  /** Six digits that no step from -2 to +2 gives now: a wrong code. */
  function wrongCode(e: { key: Buffer }): string {
    const near = new Set([-2, -1, 0, 1, 2].map((d) => codeOf(e, d)))
    for (let n = 0; ; n++) {
      const c = String(n).padStart(6, '0')
      if (!near.has(c)) return c
    }
  }

  /** POST /login with the fixture password and an optional `otp`. */
  function loginOtp(user: UserFx, otp?: string, ip?: string): Promise<Res<'login'>> {
    return loginAs(app, user, { otp, ip })
  }

  /** POST /login without `otp`, expected to stop at the second factor with `code`; returns the mfaToken. */
  async function mfaTokenOf(user: UserFx, code = 'OTP_REQUIRED', ip?: string): Promise<string> {
    const res = await loginOtp(user, undefined, ip)
    if (res.status !== 401 || res.code !== code) throw new Error(`expected ${code}: ${res.raw}`)
    return mfaTokenIn(res)
  }

  /** POST /login/otp. */
  const verify = (mfaToken: string, code: string, as: As = {}) =>
    call(app, 'verifyLoginOtp', as, { body: { mfaToken, code } })

  /** POST /login/otp/setup. */
  const setupLogin = (mfaToken: string, as: As = {}) => call(app, 'setupLoginOtp', as, { body: { mfaToken } })

  /** The tenant's session rows (all, revoked or not). */
  async function sessionCount(tenant: TenantFx): Promise<number> {
    const row = await app.ctx.dbs
      .forTenant(tenant.id)
      .selectFrom('sessions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenant.id)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  /** The user's mfaToken rows. */
  async function mfaTokenRows(user: UserFx): Promise<number> {
    const row = await app.ctx.dbs
      .forTenant(user.tenant.id)
      .selectFrom('mfa_tokens')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', user.tenant.id)
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  /** The user's LOGIN audit rows. */
  async function loginRows(user: UserFx) {
    return (await auditRows(app, user.tenant.id, 'LOGIN')).filter((r) => r.user_id === user.id)
  }

  /** An administrator of the tenant sets the user's otpEnabled flag (PATCH /users/{userId}). */
  async function setOtpEnabled(user: UserFx, value: boolean): Promise<void> {
    const admin = await userWithToken(app, user.tenant, { roles: ['admin'] })
    const res = await call(app, 'updateUser', admin.cred, {
      params: { userId: user.id },
      body: { otpEnabled: value },
    })
    if (res.status !== 200) throw new Error(`PATCH failed: ${res.raw}`)
  }

  /** An enrolled user of a fresh tenant (or of the given one). */
  async function enrolledUser(tenant?: TenantFx): Promise<UserFx & { otp: Enrolled }> {
    const user = await createUser(app, tenant ?? (await createTenant(app)))
    return { ...user, otp: await enroll(user) }
  }

  const steps = { app, clock, logLines, codeOf, wrongCode, loginOtp, mfaTokenOf, verify, setupLogin }
  const rows = { sessionCount, mfaTokenRows, loginRows, setOtpEnabled, enrolledUser }
  return { ...steps, ...rows }
}

/**
 * The app of an enrollment file on a manual clock, and /me/otp bound to it. A step once accepted is
 * never accepted again for a user, so the clock moves 30 s before every new TOTP code.
 */
export async function enrollmentApp(t: TestLike) {
  const clock = createManualClock()
  const app = await buildTestApp(t, {}, { clock })

  const getOtp = (as: As) => call(app, 'getMyOtp', as)
  const setupOtp = (as: As, body?: BodyOf<'setupMyOtp'>) => call(app, 'setupMyOtp', as, { body })
  const confirmOtp = (as: As, code: string) => call(app, 'confirmMyOtp', as, { body: { code } })
  const renewCodes = (as: As, code: string) => call(app, 'renewMyRecoveryCodes', as, { body: { code } })
  const disableOtp = (as: As, code: string) => call(app, 'disableMyOtp', as, { body: { code } })
  const patchUser = (as: As, userId: string, body: BodyOf<'updateUser'>) =>
    call(app, 'updateUser', as, { params: { userId }, body })

  /** The authenticator's code now. */
  const codeNow = (key: Buffer, drift = 0) => totpAt(key, clock.now(), drift)

  /** Moves the clock to the next step and gives the authenticator's code there: never a used step. */
  function nextCode(key: Buffer): string {
    clock.advance(STEP_MS)
    return codeNow(key)
  }

  /** Six digits that are no code of the accepted window now. */
  function wrongCode(key: Buffer): string {
    const window = new Set([-1, 0, 1].map((d) => codeNow(key, d)))
    for (let n = 0; ; n++) {
      const code = String(n).padStart(6, '0')
      if (!window.has(code)) return code
    }
  }

  /** Runs the setup and returns the authenticator's key, read from the returned otpauth URI. */
  async function startSetup(cred: As): Promise<Buffer> {
    const res = await setupOtp(cred)
    if (res.status !== 200) throw new Error(`setup failed: ${res.raw}`)
    return secretOfUri(res.data.otpauthUri)
  }

  /** A user who enrolled through /me/otp (setup and confirm), with its key and recovery codes. */
  async function enrolledMember(tenant: TenantFx, opts: Parameters<typeof createUser>[2] = {}) {
    const { cred, ...user } = await userWithToken(app, tenant, { roles: ['user'], ...opts })
    const key = await startSetup(cred)
    const res = await confirmOtp(cred, codeNow(key))
    if (res.status !== 200) throw new Error(`confirm failed: ${res.raw}`)
    return { user, cred, key, recoveryCodes: res.data.recoveryCodes as string[] }
  }

  const tdb = (user: UserFx) => app.ctx.dbs.forTenant(user.tenant.id)

  const otpRowOf = (user: UserFx) =>
    tdb(user)
      .selectFrom('user_otp')
      .selectAll()
      .where('tenant_id', '=', user.tenant.id)
      .where('user_id', '=', user.id)
      .executeTakeFirst()

  const recoveryRowsOf = (user: UserFx) => recoveryRows(app, user)

  const otpEnabledInDb = async (user: UserFx) => (await userRow(app, user.tenant.id, user.id)).otp_enabled

  const deleteUserRow = (user: UserFx) =>
    tdb(user).deleteFrom('users').where('tenant_id', '=', user.tenant.id).where('id', '=', user.id).execute()

  const rowsOf = async (user: UserFx, action: Parameters<typeof auditRows>[2]) =>
    (await auditRows(app, user.tenant.id, action)).filter((r) => r.user_id === user.id)

  const calls = { app, clock, getOtp, setupOtp, confirmOtp, renewCodes, disableOtp, patchUser }
  const codes = { codeNow, nextCode, wrongCode, startSetup, enrolledMember }
  const rows = { tdb, otpRowOf, recoveryRowsOf, otpEnabledInDb, deleteUserRow, rowsOf }
  return { ...calls, ...codes, ...rows }
}
