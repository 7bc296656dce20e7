// The per-user secret budget's tests (test/account/secret-budget-*.test.ts) share these: an app's users
// enrolled in the second factor, codes computed from the otpauthUri as an authenticator would, and the
// assertion of a budget refusal; enrollThroughMe also serves test/otp/support.ts.
import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { call, loginAs, loginTokens, mfaTokenIn, type AnyRes, type Res } from './call.js'
import { createUser, type UserFx } from './fixtures.js'
import { secretOfUri, totpAt } from './totp.js'
import type { ManualClock } from '../../src/lib/clock.js'

export const STEP_MS = 30_000
export const WINDOW_MS = 15 * 60 * 1000
export const WRONG_PASSWORD = 'Wrong-password-17'

/**
 * Enrolls a user in the second factor through /me/otp as it signs in (setup, then confirm with the
 * code of now), then moves the clock one step on; throws unless both answer 200.
 */
export async function enrollThroughMe(
  app: FastifyInstance,
  clock: ManualClock,
  user: UserFx,
): Promise<{ key: Buffer; secret: string; recoveryCodes: string[] }> {
  const as = { token: (await loginTokens(app, user)).accessToken }
  const setup = await call(app, 'setupMyOtp', as)
  if (setup.status !== 200) throw new Error(`setup failed: ${setup.raw}`)
  const key = secretOfUri(setup.data.otpauthUri)
  const confirm = await call(app, 'confirmMyOtp', as, { body: { code: totpAt(key, clock.now()) } })
  if (confirm.status !== 200) throw new Error(`confirm failed: ${confirm.raw}`)
  clock.advance(STEP_MS)
  return { key, secret: setup.data.secret, recoveryCodes: confirm.data.recoveryCodes }
}

export interface Enrolled extends UserFx {
  key: Buffer
  recoveryCodes: string[]
}

/** The test's app and clock, and helpers bound to them. */
export function harness(app: FastifyInstance, clock: ManualClock) {
  const code = (u: Enrolled) => totpAt(u.key, clock.now())
  /** Six digits that no step near now gives: a wrong code. */
  const wrong = (u: Enrolled) => {
    const near = new Set([-2, -1, 0, 1, 2].map((d) => totpAt(u.key, clock.now(), d)))
    for (let n = 0; ; n++) {
      const c = String(n).padStart(6, '0')
      if (!near.has(c)) return c
    }
  }
  /** A user of `tenant` enrolled through /me/otp, the clock then moved one step on. */
  const enrolled = async (tenant: { id: string; code: string }): Promise<Enrolled> => {
    const user = await createUser(app, tenant)
    const { key, recoveryCodes } = await enrollThroughMe(app, clock, user)
    return { ...user, key, recoveryCodes }
  }
  /** POST /login with the fixture password (and `otp` when given), from a fresh address. */
  const login = (u: UserFx, otp?: string): Promise<Res<'login'>> => loginAs(app, u, { otp })

  /** A fresh mfaToken: POST /login without otp, stopped at the second factor. */
  const mfaToken = async (u: Enrolled): Promise<string> => {
    return mfaTokenIn(await login(u))
  }
  /** POST /login/otp with a fresh mfaToken, from a fresh address. */
  const verify = async (u: Enrolled, c: string): Promise<Res<'verifyLoginOtp'>> =>
    call(app, 'verifyLoginOtp', {}, { body: { mfaToken: await mfaToken(u), code: c } })
  /** An access token of the user from a real login with its code (the clock then moves a step on). */
  const sessionOf = async (u: Enrolled): Promise<{ token: string }> => {
    const r = await login(u, code(u))
    if (r.status !== 200) throw new Error(`login failed: ${r.raw}`)
    clock.advance(STEP_MS)
    return { token: r.data.accessToken }
  }
  return { code, wrong, enrolled, login, verify, sessionOf }
}

/** Asserts a budget refusal: 429 RATE_LIMIT_EXCEEDED, `Rate limit exceeded`, Retry-After in (0, 900]. */
export function assertSpent(t: Test, r: AnyRes, what: string): void {
  t.equal(r.status, 429, `${what}: 429`)
  t.equal(r.code, 'RATE_LIMIT_EXCEEDED', `${what}: RATE_LIMIT_EXCEEDED`)
  t.equal(r.body?.error, 'Rate limit exceeded', `${what}: the contract's error text`)
  const after = Number(r.headers['retry-after'])
  t.ok(after > 0 && after <= 900, `${what}: Retry-After ${String(r.headers['retry-after'])} s`)
}
