import type { components } from '../../../generated/openapi.js'
import type { AppContext, SignupKey } from '../../context.js'
import { fail } from '../../errors.js'
import { rateLimitSubject } from '../../lib/cidr.js'
import type { RequestMeta } from '../audit/write.js'
import { budgetSpentError } from '../account/secret-check.js'
import { createAccount } from '../authentication/service.js'
import { challengeHmacKey, checkSolution, issueChallenge } from './challenge.js'
import { signupRoles } from './roles.js'

type SignupBody = components['schemas']['SignupRequest']

/** Sign-ups one client address (an IPv6 /64) may make per hour, over every key and tenant. */
export const SIGNUPS_PER_IP_PER_HOUR = 10
const HOUR_MS = 60 * 60 * 1000

/** GET /signup/challenge: a proof-of-work challenge for this key, valid 10 minutes. */
export async function getSignupChallenge(ctx: AppContext, key: SignupKey) {
  const c = await issueChallenge(
    challengeHmacKey(ctx.secretsKey),
    key.id,
    ctx.config.signupChallengeMaxNumber,
    ctx.clock.now(),
  )
  return {
    algorithm: 'SHA-256' as const,
    challenge: c.challenge,
    salt: c.salt,
    maxnumber: c.maxnumber ?? ctx.config.signupChallengeMaxNumber,
    signature: c.signature,
  }
}

/**
 * Charges the address's hourly budget on the shared counters. Why under the platform tenant: the budget
 * spans every key and tenant, and the counters are kept per tenant (their rows reference one).
 */
async function chargeAddress(ctx: AppContext, key: SignupKey, ip: string, now: number): Promise<void> {
  const platform = await ctx.tenants.byCode(ctx.config.platformTenantCode)
  const byIp = await ctx.counters.charge(
    platform?.id ?? key.tenantId,
    `signup-ip:${rateLimitSubject(ip)}`,
    SIGNUPS_PER_IP_PER_HOUR,
    HOUR_MS,
    now,
  )
  if (!byIp.taken) throw budgetSpentError(byIp.retryAfterMs)
}

/** Charges the key's hourly budget (its signupsPerHour) on the shared counters. */
async function chargeKey(ctx: AppContext, key: SignupKey, now: number): Promise<void> {
  const byKey = await ctx.counters.charge(
    key.tenantId,
    `signup-key:${key.id}`,
    key.signupsPerHour,
    HOUR_MS,
    now,
  )
  if (!byKey.taken) throw budgetSpentError(byKey.retryAfterMs)
}

/**
 * POST /signup: the proof of work (ours, for this key, unexpired), the address's budget, the solution
 * claimed once across instances, the key's budget, then createAccount, the steps of POST /register, with
 * the key's default roles as they are now (roles.ts) and `emailVerified = false`. Why this order
 * (contract section 26): a forged or stale proof costs one HMAC and spends no budget; a replayed one
 * spends its sender's address budget, so replays still cost the one who sends them, but is refused
 * before the key's, which a replayer would otherwise drain for every honest visitor of the page.
 * Refusals before createAccount write no audit row: they are a bot's, not an account's.
 */
export async function signup(
  ctx: AppContext,
  key: SignupKey,
  body: SignupBody,
  meta: RequestMeta & { clientIp: string },
) {
  const now = ctx.clock.now()
  const solution = await checkSolution(challengeHmacKey(ctx.secretsKey), body.altcha, key.id, now)
  if (!solution) fail('INVALID_CHALLENGE')
  await chargeAddress(ctx, key, meta.clientIp, now)
  if (!(await ctx.usedSolutions.claim(solution.signature, solution.expiresAt, now))) fail('INVALID_CHALLENGE')
  await chargeKey(ctx, key, now)
  const { altcha: _proof, ...identity } = body
  return createAccount(ctx, {
    tenantId: key.tenantId,
    actor: null,
    input: { ...identity, emailVerified: false },
    meta,
    metadata: { via: 'publishable_key', keyId: key.id },
    roles: (db, tenant) => signupRoles(db, tenant, key.defaultRoles),
  })
}
