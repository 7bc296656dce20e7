import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from '../../db/database.js'

// The login_throttle table (the account module's): the database counter store of account throttling
// (throttle-store.ts) and of the per-user secret budget (secret-budget.ts), and retention's sweep.

/** The columns a throttling record is read from. */
const RECORD = ['failures', 'window_started_at', 'locked_until', 'locks'] as const

/** The select of one identifier's counters, for a plain read or a locking one. */
function selectThrottle(db: Kysely<Database>, tenantId: string, key: string) {
  return db
    .selectFrom('login_throttle')
    .select(RECORD)
    .where('tenant_id', '=', tenantId)
    .where('identifier', '=', key)
}

/** One identifier's stored counters, or undefined. */
export function findThrottle(db: Kysely<Database>, tenantId: string, key: string) {
  return selectThrottle(db, tenantId, key).executeTakeFirst()
}

/**
 * The identifier's row, created blank (zero failures, window at the epoch) when missing, and locked: two
 * failures of one identifier never read the same count.
 */
export async function lockThrottle(trx: Transaction<Database>, tenantId: string, key: string) {
  // Why insert first: a row that exists can be locked.
  const blank = { tenant_id: tenantId, identifier: key, window_started_at: new Date(0) }
  await trx
    .insertInto('login_throttle')
    .values({ ...blank, failures: 0, locks: 0 })
    .onConflict((oc) => oc.doNothing())
    .execute()
  return selectThrottle(trx, tenantId, key).forUpdate().executeTakeFirstOrThrow()
}

/** Writes an identifier's counters (its row locked by lockThrottle). */
export async function writeThrottle(
  trx: Transaction<Database>,
  tenantId: string,
  key: string,
  r: { failures: number; windowStartedAt: number; lockedUntil: number | null; locks: number },
): Promise<void> {
  await trx
    .updateTable('login_throttle')
    .set({
      failures: r.failures,
      window_started_at: new Date(r.windowStartedAt),
      locked_until: r.lockedUntil === null ? null : new Date(r.lockedUntil),
      locks: r.locks,
      updated_at: new Date(),
    })
    .where('tenant_id', '=', tenantId)
    .where('identifier', '=', key)
    .execute()
}

/** Forgets the counters of these keys. */
export async function deleteThrottles(db: Kysely<Database>, tenantId: string, keys: readonly string[]) {
  if (keys.length === 0) return
  await db
    .deleteFrom('login_throttle')
    .where('tenant_id', '=', tenantId)
    .where('identifier', 'in', [...keys])
    .execute()
}

/**
 * One charge of a secret budget in one statement: an upsert whose conditional update takes the row lock,
 * so concurrent charges of one user are counted one after another. No row back: the budget is spent.
 */
export async function takeBudgetCharge(
  db: Kysely<Database>,
  p: { tenantId: string; key: string; limit: number; windowMs: number; now: number },
) {
  const at = new Date(p.now)
  const cutoff = new Date(p.now - p.windowMs)
  const fresh = sql`(t.failures = 0 or t.window_started_at <= ${cutoff}::timestamptz)`
  const { rows } = await sql<{ failures: number; window_started_at: Date | string }>`
      insert into login_throttle as t (tenant_id, identifier, failures, window_started_at, locks, updated_at)
      values (${p.tenantId}, ${p.key}, 1, ${at}::timestamptz, 0, now())
      on conflict (tenant_id, identifier) do update set
        failures = case when ${fresh} then 1 else t.failures + 1 end,
        window_started_at = case when ${fresh} then ${at}::timestamptz else t.window_started_at end,
        updated_at = now()
      where ${fresh} or t.failures < ${p.limit}::int
      returning t.failures, t.window_started_at`.execute(db)
  return rows[0]
}

/** When the identifier's running window started, or undefined. */
export function findThrottleWindow(db: Kysely<Database>, tenantId: string, key: string) {
  return db
    .selectFrom('login_throttle')
    .select('window_started_at')
    .where('tenant_id', '=', tenantId)
    .where('identifier', '=', key)
    .executeTakeFirst()
}

/** Takes one failure back from the window that started at `windowStartedAt` (none once a new one began). */
export async function giveBackBudgetCharge(
  db: Kysely<Database>,
  tenantId: string,
  key: string,
  windowStartedAt: number,
): Promise<void> {
  await db
    .updateTable('login_throttle')
    .set((eb) => ({ failures: eb('failures', '-', 1) }))
    .where('tenant_id', '=', tenantId)
    .where('identifier', '=', key)
    .where('window_started_at', '=', new Date(windowStartedAt))
    .where('failures', '>', 0)
    .execute()
}

/** Retention: counters untouched since `before`; how many went. */
export async function deleteIdleThrottles(db: Kysely<Database>, before: Date): Promise<number> {
  const r = await db.deleteFrom('login_throttle').where('updated_at', '<', before).executeTakeFirst()
  return Number(r.numDeletedRows)
}
