import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import { countAuditRowsByBucket } from './login-stats-queries.js'
import {
  countHoursInto,
  findRollupMark,
  lockRollupMark,
  setRollupMark,
  sumHourlyCounts,
} from './rollup-queries.js'

const HOUR_MS = 3_600_000

/**
 * How long after its end an hour counts as closed. Why a margin: a row carries its transaction's start
 * time, so a transaction that began before an hour ended can add rows to it for as long as it runs.
 */
const SETTLE_MS = 15 * 60_000

/** Audit rows of one bucket and action, by outcome. */
export interface BucketCount {
  start: Date
  action: string
  success: number
  failure: number
}

/**
 * The tenant's audit rows of [from, to) per UTC `bucket` and action, `from` on an hour boundary. Closed
 * hours come from the hourly rollup (counted once, on first demand, under the tenant's mark lock); the rest
 * (the last hour or so, and a `to` inside an hour) is counted from the audit log. A (start, action) may
 * appear twice, once from each source: the caller adds them up.
 */
export async function countAuditRowsPerBucket(
  db: Kysely<Database>,
  tenantId: string,
  bucket: 'hour' | 'day',
  window: { from: number; to: number; now: number },
): Promise<BucketCount[]> {
  const { from, to } = window
  const closed = Math.floor((window.now - SETTLE_MS) / HOUR_MS) * HOUR_MS
  const rolledTo = Math.max(from, Math.min(closed, Math.floor(to / HOUR_MS) * HOUR_MS))
  const counts: BucketCount[] = []
  if (rolledTo > from) {
    await ensureCounted(db, tenantId, from, rolledTo)
    counts.push(...(await sumHourlyCounts(db, tenantId, bucket, new Date(from), new Date(rolledTo))))
  }
  if (to > rolledTo) {
    counts.push(...(await countAuditRowsByBucket(db, tenantId, bucket, new Date(rolledTo), new Date(to))))
  }
  return counts
}

/**
 * Makes the rollup hold the tenant's hours of [from, to). The counted range stays one contiguous range:
 * a window outside it counts the gap between too, once.
 */
async function ensureCounted(db: Kysely<Database>, tenantId: string, from: number, to: number) {
  const seen = await findRollupMark(db, tenantId)
  if (seen && ms(seen.covered_from) <= from && ms(seen.covered_to) >= to) return
  await db.transaction().execute(async (trx) => {
    const mark = await lockRollupMark(trx, tenantId, new Date(to))
    const [coveredFrom, coveredTo] = [ms(mark.covered_from), ms(mark.covered_to)]
    if (from < coveredFrom) await countHoursInto(trx, tenantId, new Date(from), new Date(coveredFrom))
    if (to > coveredTo) await countHoursInto(trx, tenantId, new Date(coveredTo), new Date(to))
    if (from < coveredFrom || to > coveredTo) {
      await setRollupMark(
        trx,
        tenantId,
        new Date(Math.min(from, coveredFrom)),
        new Date(Math.max(to, coveredTo)),
      )
    }
  })
}

// Why through Date: a driver may hand a timestamptz back as a Date or as its text.
const ms = (d: Date | string) => new Date(d).getTime()
