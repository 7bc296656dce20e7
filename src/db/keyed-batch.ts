import { sql, type RawBuilder } from 'kysely'

// The two halves every retention statement that keeps its place shares (src/modules/system/pace.ts): the
// batch's lower bound on its key, and what it answers (how many it removed, the key of the last).

/** What one batch removed: the count, and the key of the last row (null when it took none). */
export interface KeyedBatch {
  n: number
  last: Date | null
}

/** `key >= from`, or no bound for the first batch of a pass. */
export function fromKey(key: RawBuilder<unknown>, from: Date | null): RawBuilder<unknown> {
  return from === null ? sql`true` : sql`${key} >= ${from}::timestamptz`
}

/** A batch's answer from its row `{ n, last }` (the driver gives a count as text or a number). */
export function keyedBatch(row: { n: number | string; last: Date | string | null } | undefined): KeyedBatch {
  return { n: Number(row?.n ?? 0), last: row?.last == null ? null : new Date(row.last) }
}
