import type { Kysely } from 'kysely'
import type { Redis } from 'ioredis'
import type { Database } from '../../db/database.js'
import { retryOnContention } from '../../db/contention.js'
import { deleteThrottles, findThrottle, lockThrottle, writeThrottle } from './throttle-queries.js'

// Where account-throttling counters live (docs/decisions.md D12): Redis when the service has REDIS_URL,
// so every instance sees one count, else the main database. Both offer the same three operations; the
// rule that turns failures into locks is written once, in lockout.ts, and runs on whatever they read.

/** One identifier's throttling state; times in epoch milliseconds. */
export interface ThrottleRecord {
  failures: number
  windowStartedAt: number
  lockedUntil: number | null
  locks: number
}

/** Atomic storage of throttling records per (tenant, identifier key). */
export interface ThrottleStore {
  /** The record, or null when the identifier has none. */
  read(tenantId: string, key: string): Promise<ThrottleRecord | null>
  /** Replaces the record with `next(current)`, atomically against concurrent updates of the same key. */
  update(
    tenantId: string,
    key: string,
    next: (current: ThrottleRecord | null) => ThrottleRecord,
    ttlMs: number,
  ): Promise<ThrottleRecord>
  /** Forgets the records of these keys. */
  remove(tenantId: string, keys: readonly string[]): Promise<void>
}

const ms = (d: Date | null) => (d === null ? null : new Date(d).getTime())

/** Counters in the main database's login_throttle table (one row per identifier that failed lately). */
export class DbThrottleStore implements ThrottleStore {
  constructor(readonly db: Kysely<Database>) {}

  async read(tenantId: string, key: string): Promise<ThrottleRecord | null> {
    const row = await findThrottle(this.db, tenantId, key)
    if (!row) return null
    return {
      failures: row.failures,
      windowStartedAt: new Date(row.window_started_at).getTime(),
      lockedUntil: ms(row.locked_until),
      locks: row.locks,
    }
  }

  update(
    tenantId: string,
    key: string,
    next: (current: ThrottleRecord | null) => ThrottleRecord,
  ): Promise<ThrottleRecord> {
    return retryOnContention(() =>
      this.db.transaction().execute(async (trx) => {
        const row = await lockThrottle(trx, tenantId, key)
        const started = new Date(row.window_started_at).getTime()
        const current =
          started === 0 && row.failures === 0 && row.locks === 0
            ? null
            : {
                failures: row.failures,
                windowStartedAt: started,
                lockedUntil: ms(row.locked_until),
                locks: row.locks,
              }
        const out = next(current)
        await writeThrottle(trx, tenantId, key, out)
        return out
      }),
    )
  }

  async remove(tenantId: string, keys: readonly string[]): Promise<void> {
    await deleteThrottles(this.db, tenantId, keys)
  }
}

// Compare-and-set: writes the new fields only when the record's version is still the one read.
const CAS_SCRIPT = `
local v = redis.call('HGET', KEYS[1], 'v')
if (v or '0') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', tonumber(ARGV[1]) + 1, 'f', ARGV[2], 'ws', ARGV[3], 'lu', ARGV[4], 'n', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return 1`

/** Counters in Redis hashes, `<prefix><tenantId>:<key>`, updated by compare-and-set, expiring when idle. */
export class RedisThrottleStore implements ThrottleStore {
  constructor(
    readonly redis: Redis,
    readonly prefix: string,
  ) {}

  /** The Redis key of a (tenant, identifier key) record. */
  k(tenantId: string, key: string) {
    return `${this.prefix}${tenantId}:${key}`
  }

  private async readVersioned(tenantId: string, key: string) {
    const h = await this.redis.hgetall(this.k(tenantId, key))
    if (!h.v) return { version: '0', record: null }
    const lu = Number(h.lu)
    const record: ThrottleRecord = {
      failures: Number(h.f),
      windowStartedAt: Number(h.ws),
      lockedUntil: lu > 0 ? lu : null,
      locks: Number(h.n),
    }
    return { version: h.v, record }
  }

  async read(tenantId: string, key: string): Promise<ThrottleRecord | null> {
    return (await this.readVersioned(tenantId, key)).record
  }

  async update(
    tenantId: string,
    key: string,
    next: (current: ThrottleRecord | null) => ThrottleRecord,
    ttlMs: number,
  ): Promise<ThrottleRecord> {
    // Why a loop: another instance may count a failure of the same identifier between read and write.
    for (let attempt = 0; attempt < 10; attempt++) {
      const { version, record } = await this.readVersioned(tenantId, key)
      const out = next(record)
      const args = [out.failures, out.windowStartedAt, out.lockedUntil ?? 0, out.locks, Math.ceil(ttlMs)]
      const done = await this.redis.eval(CAS_SCRIPT, 1, this.k(tenantId, key), version, ...args.map(String))
      if (done === 1) return out
    }
    throw new Error('throttle counter kept changing under concurrent updates')
  }

  async remove(tenantId: string, keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return
    await this.redis.del(...keys.map((key) => this.k(tenantId, key)))
  }
}

/**
 * Counters in this process's memory: where the secret budget counts while the shared store does not answer
 * (secret-budget.ts), so an outage of Redis never leaves checks uncounted. Updates are synchronous, hence
 * atomic. Bounded: at `maxKeys` records, expired ones go first, then the oldest.
 */
export class MemoryThrottleStore implements ThrottleStore {
  private readonly records = new Map<string, { record: ThrottleRecord; expiresAt: number }>()

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxKeys = 100_000,
  ) {}

  read(tenantId: string, key: string): Promise<ThrottleRecord | null> {
    const hit = this.records.get(`${tenantId}:${key}`)
    return Promise.resolve(hit && hit.expiresAt > this.now() ? hit.record : null)
  }

  update(
    tenantId: string,
    key: string,
    next: (current: ThrottleRecord | null) => ThrottleRecord,
    ttlMs: number,
  ): Promise<ThrottleRecord> {
    const k = `${tenantId}:${key}`
    const now = this.now()
    const hit = this.records.get(k)
    const out = next(hit && hit.expiresAt > now ? hit.record : null)
    this.records.delete(k)
    if (this.records.size >= this.maxKeys) this.evict(now)
    this.records.set(k, { record: out, expiresAt: now + ttlMs })
    return Promise.resolve(out)
  }

  remove(tenantId: string, keys: readonly string[]): Promise<void> {
    for (const key of keys) this.records.delete(`${tenantId}:${key}`)
    return Promise.resolve()
  }

  private evict(now: number): void {
    for (const [k, v] of this.records) if (v.expiresAt <= now) this.records.delete(k)
    // Why the oldest: Map keeps insertion order, and every update re-inserts its key.
    while (this.records.size >= this.maxKeys) {
      const oldest = this.records.keys().next().value
      if (oldest === undefined) break
      this.records.delete(oldest)
    }
  }
}
