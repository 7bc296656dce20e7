import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from '../../db/database.js'
import type { GrantRow } from '../../security/grants.js'
import { grantQueryParts, userRowPart } from '../permissions/grant-queries.js'
import { fromKey, keyedBatch } from '../../db/keyed-batch.js'

// The oidc_payloads table, the oidc module's: what `oidc-provider` stores through its adapter (adapter.ts),
// one row per (tenant, model, id). Every statement names the tenant, so one tenant's provider never reads
// another's rows.

/** What the adapter writes of a payload besides the payload itself. */
export interface PayloadColumns {
  grantId: string | null
  uid: string | null
  userCode: string | null
  accountId: string | null
  expiresAt: Date | null
}

/**
 * Inserts or replaces one payload. With `asyncCommit` (a PostgreSQL server only) the statement commits
 * without waiting for its WAL flush, as POST /refresh does: for short-lived payloads whose loss in a crash
 * costs a new sign-in or a repeated request, never a wrong answer. It must not run inside a transaction.
 */
export async function upsertPayload(
  db: Kysely<Database>,
  tenantId: string,
  model: string,
  id: string,
  payload: Record<string, unknown>,
  c: PayloadColumns,
  asyncCommit = false,
): Promise<void> {
  const values = {
    payload: JSON.stringify(payload),
    grant_id: c.grantId,
    uid: c.uid,
    user_code: c.userCode,
    account_id: c.accountId,
    expires_at: c.expiresAt,
  }
  if (asyncCommit) {
    // Why one statement: set_config(..., true) lasts until the end of the transaction, this statement's own.
    await sql`with async_commit as (select set_config('synchronous_commit', 'off', true))
      insert into oidc_payloads (tenant_id, model, id, payload, grant_id, uid, user_code, account_id, expires_at)
      select ${tenantId}, ${model}, ${id}, ${values.payload}::jsonb, ${values.grant_id}, ${values.uid},
        ${values.user_code}, ${values.account_id}::uuid, ${values.expires_at}::timestamptz
      from async_commit
      on conflict (tenant_id, model, id) do update set payload = excluded.payload,
        grant_id = excluded.grant_id, uid = excluded.uid, user_code = excluded.user_code,
        account_id = excluded.account_id, expires_at = excluded.expires_at, consumed_at = null`.execute(db)
    return
  }
  await db
    .insertInto('oidc_payloads')
    .values({ tenant_id: tenantId, model, id, ...values })
    .onConflict((oc) =>
      oc.columns(['tenant_id', 'model', 'id']).doUpdateSet({ ...values, consumed_at: null }),
    )
    .execute()
}

/** One write of writePayloads: a payload stored, as upsertPayload stores it. */
export interface PayloadWrite {
  model: string
  id: string
  payload: Record<string, unknown>
  columns: PayloadColumns
}

/**
 * Several upserts of one request in one statement (each a data-modifying CTE; the adapter never puts two
 * writes of the same row in one call, whose order a single statement would not keep). `asyncCommit` as
 * upsertPayload's; it must not run inside a transaction.
 */
export async function writePayloads(
  db: Kysely<Database>,
  tenantId: string,
  writes: readonly PayloadWrite[],
  asyncCommit: boolean,
): Promise<void> {
  const steps = writes.map((w, i) => {
    const name = sql.raw(`w${i}`)
    const c = w.columns
    return sql`${name} as (insert into oidc_payloads
        (tenant_id, model, id, payload, grant_id, uid, user_code, account_id, expires_at)
      select ${tenantId}, ${w.model}, ${w.id}, ${JSON.stringify(w.payload)}::jsonb, ${c.grantId}, ${c.uid},
        ${c.userCode}, ${c.accountId}::uuid, ${c.expiresAt}::timestamptz
      from async_commit
      on conflict (tenant_id, model, id) do update set payload = excluded.payload,
        grant_id = excluded.grant_id, uid = excluded.uid, user_code = excluded.user_code,
        account_id = excluded.account_id, expires_at = excluded.expires_at, consumed_at = null
      returning 1)`
  })
  const counts = writes.map((_, i) => sql`(select count(*) from ${sql.raw(`w${i}`)})`)
  // Why set_config in the statement: it lasts until the end of the transaction, this statement's own.
  const commit = asyncCommit ? sql`select set_config('synchronous_commit', 'off', true)` : sql`select 1`
  await sql`with async_commit as (${commit}),
    ${sql.join(steps)}
    select ${sql.join(counts, sql` + `)} as written`.execute(db)
}

type Found = { payload: Record<string, unknown>; consumed_at: Date | null } | undefined

/** One live payload by id, or by one of its lookup columns (an expired row is as good as gone). */
export async function findPayload(
  db: Kysely<Database>,
  tenantId: string,
  model: string,
  key: { column: 'id' | 'uid' | 'user_code'; value: string },
  now: Date,
): Promise<Found> {
  return db
    .selectFrom('oidc_payloads')
    .select(['payload', 'consumed_at'])
    .where('tenant_id', '=', tenantId)
    .where('model', '=', model)
    .where(key.column, '=', key.value)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst()
}

/** What findTokenWithContext reads with a token or a code. */
export interface TokenWithContext extends NonNullable<Found> {
  /** Which of the asked models it is. */
  model: string
  /** Its live grant. */
  grant: Found
  /** The live provider session it is bound to (`sessionUid`), with that uid. */
  session: (NonNullable<Found> & { uid: string }) | undefined
  /** Its account's user row and grant rows (permissions' grant-queries.ts), none without an account. */
  account: GrantRow[]
}

/** The token's row as findTokenWithContext's statement renders it (row_to_json). */
interface TokenJson {
  model: string
  payload: Record<string, unknown>
  consumed_at: string | null
  grant_payload: Record<string, unknown> | null
  grant_consumed_at: string | null
  session_payload: Record<string, unknown> | null
  session_consumed_at: string | null
  session_uid: string | null
}

const date = (v: string | null) => (v === null ? null : new Date(v))

/**
 * A token's or a code's live payload by id, of one of `models` (ids are random, so at most one matches), with,
 * in the same statement, what the library asks for next: its
 * live grant, the live provider session it is bound to (`sessionUid`, checked for a token that expires with
 * its session), and its account's user row and grants (findAccount). One round trip where the library asks
 * four (adapter.ts). Why the account's rows through permissions' parts: the rule for a user's grants stays
 * in one place, as the refresh rotation of sessions' queries reads them.
 */
export async function findTokenWithContext(
  db: Kysely<Database>,
  tenantId: string,
  models: readonly [string, ...string[]],
  id: string,
  now: Date,
): Promise<TokenWithContext | undefined> {
  const account = sql`(select account_id from tok)`
  const { cte, selects } = grantQueryParts(tenantId, account)
  const { rows } = await sql<GrantRow>`
    with tok as (
      select p.model, p.payload, p.consumed_at, p.account_id,
        g.payload as grant_payload, g.consumed_at as grant_consumed_at,
        s.payload as session_payload, s.consumed_at as session_consumed_at, s.uid as session_uid
      from oidc_payloads p
      left join oidc_payloads g on g.tenant_id = p.tenant_id and g.model = 'Grant' and g.id = p.grant_id
        and (g.expires_at is null or g.expires_at > ${now})
      left join oidc_payloads s on s.tenant_id = p.tenant_id and s.model = 'Session' and s.uid is not null
        and s.uid = p.payload->>'sessionUid' and (s.expires_at is null or s.expires_at > ${now})
      where p.tenant_id = ${tenantId} and p.model in (${sql.join([...models])}) and p.id = ${id}
        and (p.expires_at is null or p.expires_at > ${now})
      -- Why: the account's subqueries below need one row, whatever the ids.
      limit 1
    ), ${cte}
    select 'token' as kind, null as role, row_to_json(tok)::text as name, 0 as level from tok
    union all
    ${userRowPart(tenantId, account)}
    ${selects}`.execute(db)
  // Why the cast: the statement's own 'token' row, which grant rows never are.
  const token = rows.find((r) => (r.kind as string) === 'token')
  if (!token) return undefined
  const t = JSON.parse(token.name) as TokenJson
  return {
    model: t.model,
    payload: t.payload,
    consumed_at: date(t.consumed_at),
    grant: t.grant_payload ? { payload: t.grant_payload, consumed_at: date(t.grant_consumed_at) } : undefined,
    session:
      t.session_payload && t.session_uid
        ? { payload: t.session_payload, consumed_at: date(t.session_consumed_at), uid: t.session_uid }
        : undefined,
    account: rows.filter((r) => r !== token),
  }
}

/** Marks a payload consumed (a used code, a rotated refresh token). */
export async function consumePayload(
  db: Kysely<Database>,
  tenantId: string,
  model: string,
  id: string,
  now: Date,
): Promise<void> {
  await db
    .updateTable('oidc_payloads')
    .set({ consumed_at: now })
    .where('tenant_id', '=', tenantId)
    .where('model', '=', model)
    .where('id', '=', id)
    .execute()
}

/** Deletes one payload. */
export async function destroyPayload(db: Kysely<Database>, tenantId: string, model: string, id: string) {
  await db
    .deleteFrom('oidc_payloads')
    .where('tenant_id', '=', tenantId)
    .where('model', '=', model)
    .where('id', '=', id)
    .execute()
}

/** Deletes every payload of a grant (its codes and tokens, the grant itself). */
export async function revokeGrantPayloads(db: Kysely<Database>, tenantId: string, grantId: string) {
  await db
    .deleteFrom('oidc_payloads')
    .where('tenant_id', '=', tenantId)
    .where('grant_id', '=', grantId)
    .execute()
}

/** Deletes every payload issued to one client (its deletion). */
export async function deleteClientPayloads(trx: Transaction<Database>, tenantId: string, clientId: string) {
  await trx
    .deleteFrom('oidc_payloads')
    .where('tenant_id', '=', tenantId)
    .where(sql<string>`payload->>'clientId'`, '=', clientId)
    .execute()
}

/** A back-channel logout owed to a client: the provider session `sid` of `accountId` ended (section 23). */
export interface OwedLogout {
  tenantId: string
  clientId: string
  accountId: string
  sid: string
}

type SessionPayload = { authorizations?: Record<string, { sid?: string; grantId?: string }> }

/** Queues a logout token for each client that has a grant in the ended provider sessions. */
async function queueLogouts(
  db: Kysely<Database>,
  tenantId: string,
  ended: { account_id: string | null; payload: unknown }[],
  now: Date,
): Promise<void> {
  const rows = ended.flatMap((s) =>
    Object.entries((s.payload as SessionPayload).authorizations ?? {}).flatMap(([clientId, a]) =>
      a.sid && s.account_id
        ? [
            {
              tenant_id: tenantId,
              model: LOGOUT_MODEL,
              id: `${a.sid}:${clientId}`,
              payload: JSON.stringify({ clientId, accountId: s.account_id, sid: a.sid }),
              account_id: s.account_id,
              // Why an expiry: a receiver that never answers is not retried forever (retention sweeps it).
              expires_at: new Date(now.getTime() + 3_600_000),
            },
          ]
        : [],
    ),
  )
  if (rows.length === 0) return
  await db
    .insertInto('oidc_payloads')
    .values(rows)
    .onConflict((oc) => oc.columns(['tenant_id', 'model', 'id']).doNothing())
    .execute()
}

/** The model name of a queued back-channel logout (not one of the library's). */
const LOGOUT_MODEL = 'TesseraLogout'

/**
 * Deletes every provider payload of one user (sessions, grants, codes and tokens): their Tessera sign-ins
 * ended, so what the provider issued on them ends too, and each client with a grant in a session is owed a
 * logout token (contract section 23).
 */
export async function deleteAccountPayloads(
  db: Kysely<Database>,
  tenantId: string,
  accountId: string,
  now: Date,
): Promise<void> {
  const ended = await db
    .deleteFrom('oidc_payloads')
    .where('tenant_id', '=', tenantId)
    .where('account_id', '=', accountId)
    .where('model', '<>', LOGOUT_MODEL)
    .returning(['model', 'account_id', 'payload'])
    .execute()
  await queueLogouts(
    db,
    tenantId,
    ended.filter((r) => r.model === 'Session'),
    now,
  )
}

/**
 * Ends the provider sessions bound to these Tessera sessions (the interaction's sign-in, `tessera_sid`) and
 * the grants made in them, and owes their clients a logout token: a logout or a revocation of one session.
 */
export async function endBoundProviderSessions(
  db: Kysely<Database>,
  tenantId: string,
  sessions: readonly { id: string; user_id: string }[],
  now: Date,
): Promise<void> {
  if (sessions.length === 0) return
  const ended = await db
    .deleteFrom('oidc_payloads')
    .where('tenant_id', '=', tenantId)
    .where('model', '=', 'Session')
    .where('account_id', 'in', [...new Set(sessions.map((s) => s.user_id))])
    .where(
      sql<string>`payload->>'tessera_sid'`,
      'in',
      sessions.map((s) => s.id),
    )
    .returning(['account_id', 'payload'])
    .execute()
  if (ended.length === 0) return
  const grants = ended.flatMap((s) =>
    Object.values((s.payload as SessionPayload).authorizations ?? {}).flatMap((a) =>
      a.grantId ? [a.grantId] : [],
    ),
  )
  if (grants.length > 0)
    await db
      .deleteFrom('oidc_payloads')
      .where('tenant_id', '=', tenantId)
      .where('grant_id', 'in', grants)
      .execute()
  await queueLogouts(db, tenantId, ended, now)
}

/** Claims up to `limit` owed logout tokens of a database (each is claimed by one instance only). */
export async function claimOwedLogouts(db: Kysely<Database>, limit: number): Promise<OwedLogout[]> {
  const r = await sql<{ tenant_id: string; payload: { clientId: string; accountId: string; sid: string } }>`
    delete from oidc_payloads where ctid in (
      select ctid from oidc_payloads where model = ${LOGOUT_MODEL} limit ${limit} for update skip locked)
    returning tenant_id, payload`.execute(db)
  return r.rows.map((row) => ({ tenantId: row.tenant_id, ...row.payload }))
}

/**
 * Retention: up to `limit` expired payloads, in expiry order from `from` on (system/pace.ts keeps the
 * place); how many, and the expiry of the last. Refresh tokens live as long as their grant, so the table
 * holds as many rows as there are authorizations, and a backlog's batches must not walk again what the
 * ones before them deleted.
 */
export async function sweepExpiredPayloads(
  db: Kysely<Database>,
  p: { now: Date; limit: number; from: Date | null },
): Promise<{ n: number; last: Date | null }> {
  const from = fromKey(sql`expires_at`, p.from)
  const r = await sql<{ n: number; last: Date | string | null }>`with picked as (
      select ctid, expires_at from oidc_payloads where expires_at < ${p.now} and ${from}
      order by expires_at limit ${p.limit}
    ), gone as (delete from oidc_payloads where ctid in (select ctid from picked) returning 1)
    select (select count(*)::int from gone) as n, (select max(expires_at) from picked) as last`.execute(db)
  const row = r.rows[0]
  return keyedBatch(row)
}

/** The user's grants (the applications they authorized), newest first. */
export async function listAccountGrants(
  db: Kysely<Database>,
  tenantId: string,
  accountId: string,
  now: Date,
) {
  return db
    .selectFrom('oidc_payloads')
    .select(['payload'])
    .where('tenant_id', '=', tenantId)
    .where('model', '=', 'Grant')
    .where('account_id', '=', accountId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy(sql`(payload->>'iat')::bigint`, 'desc')
    .execute()
}

/** Deletes what the user granted one client (its grants, codes and tokens); how many rows went. */
export async function deleteAccountClientPayloads(
  db: Kysely<Database>,
  tenantId: string,
  accountId: string,
  clientId: string,
): Promise<number> {
  const r = await db
    .deleteFrom('oidc_payloads')
    .where('tenant_id', '=', tenantId)
    .where('account_id', '=', accountId)
    .where(sql<string>`payload->>'clientId'`, '=', clientId)
    .executeTakeFirst()
  return Number(r.numDeletedRows)
}
