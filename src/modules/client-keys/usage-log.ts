import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import type { Clock } from '../../lib/clock.js'
import { insertUsageRows, touchLastUsed, type UsageRow } from './usage-queries.js'

/** The part of a pino/Fastify logger the usage log needs. */
export interface UsageLogger {
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

export interface UsageLogOptions {
  /** How often buffered rows are written; default 500 ms (getClientKeyLogs promises visibility within 2 s). */
  readonly flushIntervalMs?: number
  /** Rows per multi-row insert; a buffer this full is flushed at once, without waiting for the timer. */
  readonly batchRows?: number
  /** Most rows held in memory; beyond it new rows are dropped and counted. */
  readonly maxBuffered?: number
}

export type UsageInput = Omit<UsageRow, 'createdAt'>

/** Counters for tests and operators. */
export interface UsageCounters {
  readonly buffered: number
  readonly written: number
  readonly dropped: number
}

// Why these bounds: at ~300 bytes a row, 20,000 rows is a few MB, about 20 s of a database outage at
// 1,000 key requests a second; a row is 10 parameters, so 1,000 rows stay far below PostgreSQL's 65,535.
const DEFAULTS = { flushIntervalMs: 500, batchRows: 1000, maxBuffered: 20_000 }
const CLOSE_ATTEMPTS = 3
const FAILURE_LOG_INTERVAL_MS = 30_000

/** Epoch microseconds as ISO-8601 with six fractional digits (timestamptz keeps microseconds). */
function microsToIso(us: number): string {
  const iso = new Date(Math.floor(us / 1000)).toISOString()
  return `${iso.slice(0, -1)}${String(us % 1000).padStart(3, '0')}Z`
}

/**
 * The Client Key usage log: requests are recorded in memory (no database round trip on the request
 * path) and written in batches, with each key's `last_used_at`, at least every flush interval and on
 * close. Memory is bounded: past `maxBuffered` rows new ones are dropped and counted.
 */
export class UsageLog {
  private buffer: UsageRow[] = []
  private tail: Promise<void> = Promise.resolve()
  private drainQueued = false
  private timer: NodeJS.Timeout | null = null
  private closed = false
  private lastMicros = 0
  private written = 0
  private dropped = 0
  private droppedReported = 0
  private lastFailureLog = 0
  private readonly opts: Required<UsageLogOptions>

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly log: UsageLogger,
    opts: UsageLogOptions = {},
  ) {
    this.opts = { ...DEFAULTS, ...opts }
  }

  /** Starts the periodic flush (its timer does not keep the process alive). */
  start(): void {
    if (this.timer || this.closed) return
    this.timer = setInterval(() => void this.flush(), this.opts.flushIntervalMs)
    this.timer.unref()
  }

  /** Buffers one request; synchronous and never throws. */
  record(input: UsageInput): void {
    if (this.closed || this.buffer.length >= this.opts.maxBuffered) {
      this.dropped++
      return
    }
    // Why strictly increasing: requests finishing within one millisecond keep their order in the log.
    const us = Math.max(this.clock.now() * 1000, this.lastMicros + 1)
    this.lastMicros = us
    this.buffer.push({ ...input, createdAt: microsToIso(us) })
    if (this.buffer.length >= this.opts.batchRows) void this.flush()
  }

  /** Writes everything buffered so far; resolves when it is stored (or failed and was kept for a retry). */
  flush(): Promise<void> {
    // Why: a drain queued but not yet started will take every row buffered by the time it runs.
    if (this.drainQueued) return this.tail
    this.drainQueued = true
    this.tail = this.tail.then(() => {
      this.drainQueued = false
      return this.drain()
    })
    return this.tail
  }

  /** Stops the timer and writes what is left, retrying briefly; later records are dropped and counted. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    for (let attempt = 0; attempt < CLOSE_ATTEMPTS; attempt++) {
      await this.flush()
      if (this.buffer.length === 0) break
      await new Promise((r) => setTimeout(r, 100 * (attempt + 1)))
    }
    this.closed = true
    if (this.buffer.length > 0) {
      this.dropped += this.buffer.length
      this.log.error({ lost: this.buffer.length }, 'client key usage rows could not be written at shutdown')
      this.buffer = []
    }
  }

  /** Rows waiting, written and dropped so far. */
  counters(): UsageCounters {
    return { buffered: this.buffer.length, written: this.written, dropped: this.dropped }
  }

  private async drain(): Promise<void> {
    if (this.dropped > this.droppedReported) {
      this.log.warn({ dropped: this.dropped - this.droppedReported }, 'client key usage rows dropped')
      this.droppedReported = this.dropped
    }
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, this.opts.batchRows)
      try {
        await this.write(batch)
        this.written += batch.length
      } catch (err) {
        this.requeue(batch)
        // Why throttled: during an outage every tick fails; one line per interval says as much.
        const now = Date.now()
        if (now - this.lastFailureLog >= FAILURE_LOG_INTERVAL_MS) {
          this.lastFailureLog = now
          this.log.warn({ err, buffered: this.buffer.length }, 'client key usage flush failed; will retry')
        }
        return
      }
    }
    this.lastFailureLog = 0
  }

  /** Inserts the rows and moves `last_used_at` in one transaction, so a retry never duplicates rows. */
  private async write(batch: readonly UsageRow[]): Promise<void> {
    const lastUse = new Map<string, string>()
    for (const r of batch) {
      const seen = lastUse.get(r.keyId)
      if (seen === undefined || seen < r.createdAt) lastUse.set(r.keyId, r.createdAt)
    }
    await this.db.transaction().execute(async (trx) => {
      await insertUsageRows(trx, batch)
      await touchLastUsed(trx, lastUse)
    })
  }

  private requeue(batch: UsageRow[]): void {
    // Why the oldest first: they were recorded first; rows beyond the cap are the newest and are dropped.
    const all = batch.concat(this.buffer)
    const over = all.length - this.opts.maxBuffered
    if (over > 0) {
      all.length = this.opts.maxBuffered
      this.dropped += over
    }
    this.buffer = all
  }
}
