import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import { databaseBusy } from './activity-queries.js'

// How retention paces its batches (issue 45). Two rules: a batch stays well inside the 15-second query
// timeout, whatever the table's state (its size follows the time the last one took); and while other
// clients use the database, the sweep waits after each batch as long as the batch took, so it takes at
// most about half of a database core from them. Why the database and not this process: the sweep runs on
// one instance (the advisory lock), and the load it competes with comes from every instance.

/** The time one batch should take at most; the next batch is halved when it took longer. */
export const BATCH_BUDGET_MS = 1000
/** The smallest batch the sizing shrinks to. */
const MIN_ROWS = 100

/** What a pacer needs besides the database: replaceable in tests. */
export interface PaceHooks {
  /** Whether another client is using the database now (default: databaseBusy). */
  busy?: () => Promise<boolean>
  sleep?: (ms: number) => Promise<void>
}

const sleepFor = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** Sizes and spaces one pass's batches (see the top of this file). */
export class Pacer {
  private rows: number
  private readonly min: number
  private readonly busy: () => Promise<boolean>
  private readonly sleep: (ms: number) => Promise<void>

  constructor(
    db: Kysely<Database>,
    private readonly max: number,
    hooks: PaceHooks = {},
  ) {
    this.rows = max
    this.min = Math.min(MIN_ROWS, max)
    this.busy = hooks.busy ?? (() => databaseBusy(db))
    this.sleep = hooks.sleep ?? sleepFor
  }

  /** The rows the next batch may take. */
  size(): number {
    return this.rows
  }

  /** After a batch that took `ms`: resizes the next one, then yields (longer while the database is busy). */
  async after(ms: number): Promise<void> {
    if (ms > BATCH_BUDGET_MS) this.rows = Math.max(this.min, Math.floor(this.rows / 2))
    else if (ms < BATCH_BUDGET_MS / 4) this.rows = Math.min(this.max, this.rows * 2)
    if (await this.busy()) await this.sleep(Math.min(ms, BATCH_BUDGET_MS * 2))
    // Why yield even when idle: other statements of this process run in between, never behind a long one.
    else await new Promise((r) => setImmediate(r))
  }
}

/**
 * One batch of a sweep that keeps its place: the rows from the key `from` on (null: from the first) up to
 * `limit`; how many it removed, and the key of the last (null when the statement keeps no place).
 */
export type SweepStep = (from: Date | null, limit: number) => Promise<{ n: number; last: Date | null }>

/**
 * Runs `step` until a batch comes back short, each batch starting at the key the last one ended at, so no
 * batch walks again what the ones before it removed. Returns the rows removed.
 */
export async function keepingPlace(step: SweepStep, pacer: Pacer): Promise<number> {
  let from: Date | null = null
  let total = 0
  for (;;) {
    const limit = pacer.size()
    const started = performance.now()
    const { n, last } = await step(from, limit)
    total += n
    if (n < limit) return total
    if (last !== null) from = last
    await pacer.after(performance.now() - started)
  }
}
