import type { FastifyBaseLogger } from 'fastify'
import type { AccountLockout, AppContext, TenantInfo } from '../../context.js'
import { writeAudit, type RequestMeta } from '../audit/write.js'
import { AppError } from '../../errors.js'
import { classifyIdentifier } from '../../lib/identifiers.js'
import type { LockoutConfig } from '../../security/auth-config.js'
import type { ThrottleRecord, ThrottleStore } from './throttle-store.js'
import { SecretBudget } from './secret-budget.js'

// Account throttling (`Lockout`, openapi/components/auth-config.yaml; docs/decisions.md D12): failed
// logins counted per tenant and normalised identifier across every address, locks that double.

/**
 * The throttling key of a login identifier: its kind and normalised value, so `Ana@Acme.test ` and
 * `ana@acme.test` share one count. A value that is no identifier at all is keyed by its trimmed,
 * lowercased text: it fails like an unknown identifier, and is throttled like one.
 */
export function throttleKey(identifier: string): string {
  const id = classifyIdentifier(identifier)
  return id ? `${id.kind}:${id.value}` : `raw:${identifier.trim().toLowerCase()}`
}

/** Every key a user can be throttled under: one per identifier it has. */
export function userThrottleKeys(user: {
  email: string | null
  username: string | null
  cpf_cnpj: string | null
}): string[] {
  const keys: string[] = []
  if (user.email) keys.push(`email:${user.email.toLowerCase()}`)
  if (user.username) keys.push(`username:${user.username.toLowerCase()}`)
  if (user.cpf_cnpj) keys.push(`cpf_cnpj:${user.cpf_cnpj}`)
  return keys
}

/**
 * The record after one more failure at `now`, and the length of the lock it starts (null when it starts
 * none). Failures count from the first of a window; the `threshold`-th locks for baseSeconds × 2^(locks
 * before), at most maxSeconds, and starts a new count. A record idle for longer than maxSeconds past its
 * last window or lock is forgotten, doubling included.
 */
export function nextThrottle(
  current: ThrottleRecord | null,
  cfg: LockoutConfig,
  now: number,
): { record: ThrottleRecord; lockedSeconds: number | null } {
  const windowMs = cfg.windowSeconds * 1000
  const stale =
    current !== null &&
    now > Math.max(current.lockedUntil ?? 0, current.windowStartedAt + windowMs) + cfg.maxSeconds * 1000
  const base =
    current === null || stale ? { failures: 0, windowStartedAt: now, lockedUntil: null, locks: 0 } : current
  if (base.lockedUntil !== null && base.lockedUntil > now) return { record: base, lockedSeconds: null }
  const fresh = base.failures === 0 || now - base.windowStartedAt >= windowMs
  const failures = (fresh ? 0 : base.failures) + 1
  const windowStartedAt = fresh ? now : base.windowStartedAt
  if (failures < cfg.threshold) {
    return { record: { ...base, failures, windowStartedAt, lockedUntil: null }, lockedSeconds: null }
  }
  const lockedSeconds = Math.min(cfg.baseSeconds * 2 ** base.locks, cfg.maxSeconds)
  return {
    record: {
      failures: 0,
      windowStartedAt: now,
      lockedUntil: now + lockedSeconds * 1000,
      locks: base.locks + 1,
    },
    lockedSeconds,
  }
}

/** How long a record outlives its last event in the store: the doubling is remembered that long. */
function ttlMs(r: ThrottleRecord, cfg: LockoutConfig, now: number): number {
  const end = Math.max(r.lockedUntil ?? 0, r.windowStartedAt + cfg.windowSeconds * 1000)
  return Math.max(1000, end - now + cfg.maxSeconds * 1000)
}

/**
 * Account throttling over a counter store. Fails open: when the store does not answer, logins go on under
 * the per-IP budgets alone, and `status()` reports `down` (health shows `degraded`) until it answers again.
 */
export class Lockout implements AccountLockout {
  private failing = false

  constructor(
    private readonly store: ThrottleStore,
    private readonly log: FastifyBaseLogger,
    private readonly conn: {
      /** False while the store's connection is known to be down (Redis); the store is then not asked. */
      connected: () => boolean
      /** Closes the store's own connection (Redis). */
      close: () => void
    } = { connected: () => true, close: () => {} },
  ) {}

  /** The per-user secret budget on this counter store and connection (shared the same way). */
  secretBudget(now: () => number): SecretBudget {
    return new SecretBudget(this.store, this.log, () => this.conn.connected(), now)
  }

  /** Closes the counter store's own connection, if it has one. */
  close(): void {
    this.conn.close()
  }

  private connected(): boolean {
    return this.conn.connected()
  }

  /** `up`, or `down` since a call to the counter store failed and until one succeeds. */
  status(): 'up' | 'down' {
    return this.failing ? 'down' : 'up'
  }

  private async guard<T>(what: string, fallback: T, fn: () => Promise<T>): Promise<T> {
    // Why not wait: a store known to be disconnected (Redis) fails at once rather than being asked.
    if (!this.connected()) {
      this.failing = true
      return fallback
    }
    try {
      const out = await fn()
      this.failing = false
      return out
    } catch (err) {
      if (!this.failing)
        this.log.warn({ err }, `account throttling: ${what} failed; logins go on unthrottled`)
      this.failing = true
      return fallback
    }
  }

  /** Seconds the identifier stays locked (0: not locked), and whether it has a record at all. */
  async check(
    tenantId: string,
    key: string,
    now: number,
  ): Promise<{ lockedSeconds: number; tracked: boolean }> {
    const record = await this.guard('read', null, () => this.store.read(tenantId, key))
    const left = record?.lockedUntil != null ? record.lockedUntil - now : 0
    return { lockedSeconds: left > 0 ? Math.ceil(left / 1000) : 0, tracked: record !== null }
  }

  /** Counts a failed login; the length of the lock it started, or null. */
  async failed(tenantId: string, key: string, cfg: LockoutConfig, now: number): Promise<number | null> {
    let lockedSeconds: number | null = null
    await this.guard('count', null, () =>
      this.store.update(
        tenantId,
        key,
        (current) => {
          const out = nextThrottle(current, cfg, now)
          lockedSeconds = out.lockedSeconds
          return out.record
        },
        ttlMs(
          { failures: 0, windowStartedAt: now, lockedUntil: now + cfg.maxSeconds * 1000, locks: 0 },
          cfg,
          now,
        ),
      ),
    )
    return lockedSeconds
  }

  /** A successful login starts the identifier's count over. */
  async succeeded(tenantId: string, key: string): Promise<void> {
    await this.guard('reset', undefined, () => this.store.remove(tenantId, [key]))
  }

  /** Lifts the locks of these keys (an administrator's unlock); SERVICE_UNAVAILABLE when the store is down. */
  async clear(tenantId: string, keys: readonly string[]): Promise<void> {
    try {
      await this.store.remove(tenantId, keys)
      this.failing = false
    } catch (err) {
      this.failing = true
      this.log.warn({ err }, 'account throttling: unlock failed')
      throw new AppError('SERVICE_UNAVAILABLE', 'The account-throttling store cannot be reached')
    }
  }
}

/** 429 for a locked identifier, with `Retry-After` (the errors plugin sends an error's headers on a 429). */
export function lockedError(seconds: number): AppError {
  return Object.assign(new AppError('RATE_LIMIT_EXCEEDED', 'Rate limit exceeded'), {
    headers: { 'retry-after': String(seconds) },
  })
}

/**
 * Counts a failed login of `key` when the tenant throttles (a wrong password, an unknown identifier, a
 * wrong second-factor code), and writes the ACCOUNT_LOCKED row when it starts a lock.
 */
export async function countLoginFailure(
  ctx: AppContext,
  tenant: TenantInfo,
  key: string,
  userId: string | null,
  meta: RequestMeta,
): Promise<void> {
  const cfg = tenant.authConfig.lockout
  if (!cfg.enabled) return
  const lockedSeconds = await ctx.lockout.failed(tenant.id, key, cfg, ctx.clock.now())
  if (lockedSeconds === null) return
  await writeAudit(ctx.dbs.forTenant(tenant.id), {
    tenantId: tenant.id,
    action: 'ACCOUNT_LOCKED',
    success: true,
    userId,
    metadata: { reason: `${cfg.threshold} failed logins`, lockedSeconds },
    meta,
  })
}
