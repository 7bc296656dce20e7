import type { Kysely } from 'kysely'
import type { FastifyBaseLogger } from 'fastify'
import type { SecretCharge, UserSecretBudget, WindowCounter } from '../../context.js'
import type { Database } from '../../db/database.js'
import { AppError } from '../../errors.js'
import {
  DbThrottleStore,
  MemoryThrottleStore,
  RedisThrottleStore,
  type ThrottleRecord,
  type ThrottleStore,
} from './throttle-store.js'
import {
  deleteThrottles,
  findThrottleWindow,
  giveBackBudgetCharge,
  takeBudgetCharge,
} from './throttle-queries.js'

// The per-user secret budget (contract section 22; docs/decisions.md, "The per-user secret budget"):
// every check of a user's second factor or current password is charged before it runs, always, whatever
// auth_config.lockout says. A check that passes gives its charge back, so only failures stay counted: at
// most LIMIT in a window of WINDOW_MS that starts at the first failure; past it every check of the user is
// refused until the window ends or an administrator unlocks the user. A success does not erase earlier
// failures.

/** Failures a user may have in one window. */
export const SECRET_BUDGET_LIMIT = 10
/** The window's length: 15 minutes from its first failure. */
export const SECRET_BUDGET_WINDOW_MS = 15 * 60 * 1000

/** The counter key of a user's budget, beside the lockout's identifier keys (`email:…`, `raw:…`). */
export const budgetKey = (userId: string) => `secret-budget:${userId}`

/** Atomic budget operations on one counter store. */
interface BudgetCounter {
  /** Charges one failure unless `limit` are counted in the running window; atomic against concurrent takes. */
  take(tenantId: string, key: string, limit: number, windowMs: number, now: number): Promise<SecretCharge>
  /** Gives a charge back, unless its window has ended and another begun since. */
  giveBack(tenantId: string, key: string, windowStartedAt: number): Promise<void>
  remove(tenantId: string, keys: readonly string[]): Promise<void>
}

/** The record after a charge at `now`, and the charge (the rule every counter applies). */
export function takeRule(
  current: ThrottleRecord | null,
  limit: number,
  windowMs: number,
  now: number,
): { record: ThrottleRecord; charge: SecretCharge } {
  const fresh = current === null || current.failures === 0 || now - current.windowStartedAt >= windowMs
  const base = fresh ? { failures: 0, windowStartedAt: now, lockedUntil: null, locks: 0 } : current
  if (base.failures >= limit) {
    return { record: base, charge: { taken: false, retryAfterMs: base.windowStartedAt + windowMs - now } }
  }
  const record = { ...base, failures: base.failures + 1 }
  return {
    record,
    charge: { taken: true, failures: record.failures, windowStartedAt: record.windowStartedAt },
  }
}

/** Any store through its read-modify-write `update` (the in-memory fallback). */
class StoreBudgetCounter implements BudgetCounter {
  constructor(private readonly store: ThrottleStore) {}

  async take(tenantId: string, key: string, limit: number, windowMs: number, now: number) {
    let charge: SecretCharge = { taken: false, retryAfterMs: windowMs }
    await this.store.update(
      tenantId,
      key,
      (current) => {
        const out = takeRule(current, limit, windowMs, now)
        charge = out.charge
        return out.record
      },
      windowMs + 1000,
    )
    return charge
  }

  async giveBack(tenantId: string, key: string, windowStartedAt: number) {
    const blank = { failures: 0, windowStartedAt: 0, lockedUntil: null, locks: 0 }
    await this.store.update(
      tenantId,
      key,
      (c) =>
        c && c.windowStartedAt === windowStartedAt && c.failures > 0
          ? { ...c, failures: c.failures - 1 }
          : (c ?? blank),
      SECRET_BUDGET_WINDOW_MS + 1000,
    )
  }

  remove(tenantId: string, keys: readonly string[]) {
    return this.store.remove(tenantId, keys)
  }
}

/**
 * The main database's login_throttle rows, one statement per charge: an upsert whose conditional update
 * takes the row lock, so concurrent charges of one user are counted one after another.
 */
class DbBudgetCounter implements BudgetCounter {
  constructor(private readonly db: Kysely<Database>) {}

  async take(tenantId: string, key: string, limit: number, windowMs: number, now: number) {
    const row = await takeBudgetCharge(this.db, { tenantId, key, limit, windowMs, now })
    if (row) {
      const started = new Date(row.window_started_at).getTime()
      return { taken: true as const, failures: row.failures, windowStartedAt: started }
    }
    // Why a second query only here: a refused charge changed nothing, so nothing was returned to read.
    const spent = await findThrottleWindow(this.db, tenantId, key)
    const started = spent ? new Date(spent.window_started_at).getTime() : now
    return { taken: false as const, retryAfterMs: started + windowMs - now }
  }

  async giveBack(tenantId: string, key: string, windowStartedAt: number) {
    await giveBackBudgetCharge(this.db, tenantId, key, windowStartedAt)
  }

  async remove(tenantId: string, keys: readonly string[]) {
    await deleteThrottles(this.db, tenantId, keys)
  }
}

// One round trip per charge, atomic in Redis; the fields are the lockout hashes' (`f`, `ws`).
const TAKE_SCRIPT = `
local h = redis.call('HMGET', KEYS[1], 'f', 'ws')
local now, limit, win = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local f, ws = tonumber(h[1]) or 0, tonumber(h[2]) or 0
if f == 0 or now - ws >= win then f = 0; ws = now end
if f >= limit then return {0, ws + win - now, f} end
f = f + 1
redis.call('HSET', KEYS[1], 'f', f, 'ws', ws)
redis.call('PEXPIRE', KEYS[1], ws + win - now + 1000)
return {1, ws, f}`

const GIVE_BACK_SCRIPT = `
local h = redis.call('HMGET', KEYS[1], 'f', 'ws')
if tonumber(h[2]) == tonumber(ARGV[1]) and (tonumber(h[1]) or 0) > 0 then
  redis.call('HINCRBY', KEYS[1], 'f', -1)
end
return 1`

/** Redis hashes under the lockout's prefix (so REDIS_KEY_PREFIX covers them), changed by Lua scripts. */
class RedisBudgetCounter implements BudgetCounter {
  constructor(private readonly store: RedisThrottleStore) {}

  async take(tenantId: string, key: string, limit: number, windowMs: number, now: number) {
    const out = (await this.store.redis.eval(
      TAKE_SCRIPT,
      1,
      this.store.k(tenantId, key),
      String(now),
      String(limit),
      String(windowMs),
    )) as [number, number, number]
    return out[0] === 1
      ? { taken: true as const, failures: out[2], windowStartedAt: out[1] }
      : { taken: false as const, retryAfterMs: out[1] }
  }

  async giveBack(tenantId: string, key: string, windowStartedAt: number) {
    await this.store.redis.eval(GIVE_BACK_SCRIPT, 1, this.store.k(tenantId, key), String(windowStartedAt))
  }

  remove(tenantId: string, keys: readonly string[]) {
    return this.store.remove(tenantId, keys)
  }
}

function counterFor(store: ThrottleStore): BudgetCounter {
  if (store instanceof RedisThrottleStore) return new RedisBudgetCounter(store)
  if (store instanceof DbThrottleStore) return new DbBudgetCounter(store.db)
  return new StoreBudgetCounter(store)
}

/** A charge as SecretBudget hands it out: which counter took it, for the give-back. */
type Charge = (SecretCharge & { taken: true; local: boolean }) | (SecretCharge & { taken: false })

/**
 * The per-user secret budget over the lockout's counter store (shared by every instance). Fails to this
 * process's memory, not open: while the store does not answer, checks are counted here, per instance, and
 * `status()` is `down` (health shows `degraded`).
 */
export class SecretBudget implements UserSecretBudget, WindowCounter {
  private readonly shared: BudgetCounter
  private readonly local: BudgetCounter
  private failing = false

  constructor(
    store: ThrottleStore,
    private readonly log: FastifyBaseLogger,
    /** False while the store's connection is known to be down (Redis); the store is then not asked. */
    private readonly connected: () => boolean = () => true,
    now: () => number = Date.now,
  ) {
    this.shared = counterFor(store)
    this.local = new StoreBudgetCounter(new MemoryThrottleStore(now))
  }

  /** `up`, or `down` since a call to the shared store failed and until one succeeds. */
  status(): 'up' | 'down' {
    return this.failing ? 'down' : 'up'
  }

  /** Charges one check of the user's secret at `now`; refused once the window holds the limit's failures. */
  take(tenantId: string, userId: string, now: number): Promise<Charge> {
    return this.charge(tenantId, budgetKey(userId), SECRET_BUDGET_LIMIT, SECRET_BUDGET_WINDOW_MS, now)
  }

  /**
   * Counts one event under (tenant, key) unless `limit` are counted in the running window: the same
   * counters and fallback as the secret budget, for other budgets (the sign-up budgets). Never given back.
   */
  async charge(tenantId: string, key: string, limit: number, windowMs: number, now: number): Promise<Charge> {
    const args = [tenantId, key, limit, windowMs, now] as const
    if (this.connected()) {
      try {
        const charge = await this.shared.take(...args)
        this.failing = false
        return charge.taken ? { ...charge, local: false } : charge
      } catch (err) {
        if (!this.failing) this.log.warn({ err }, 'secret budget: shared store failed; counting locally')
      }
    }
    this.failing = true
    const charge = await this.local.take(...args)
    return charge.taken ? { ...charge, local: true } : charge
  }

  /** Gives a charge back (the check passed, or never judged the secret). Best effort: a loss only overcounts. */
  async giveBack(tenantId: string, userId: string, charge: SecretCharge): Promise<void> {
    if (!charge.taken) return
    // Why `in`: a charge this budget handed out says which counter took it (see Charge).
    const counter = 'local' in charge && charge.local === true ? this.local : this.shared
    await counter.giveBack(tenantId, budgetKey(userId), charge.windowStartedAt).catch((err: unknown) => {
      this.log.warn({ err }, 'secret budget: give-back failed; the check stays counted')
    })
  }

  /** Forgets the user's failures (an administrator's unlock); SERVICE_UNAVAILABLE when the store is down. */
  async clear(tenantId: string, userId: string): Promise<void> {
    await this.local.remove(tenantId, [budgetKey(userId)])
    try {
      await this.shared.remove(tenantId, [budgetKey(userId)])
    } catch (err) {
      this.log.warn({ err }, 'secret budget: unlock failed')
      throw new AppError('SERVICE_UNAVAILABLE', 'The account-throttling store cannot be reached')
    }
  }
}
