import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from '../../db/database.js'

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

/** Inserts or replaces one payload. */
export async function upsertPayload(
  db: Kysely<Database>,
  tenantId: string,
  model: string,
  id: string,
  payload: Record<string, unknown>,
  c: PayloadColumns,
): Promise<void> {
  const values = {
    payload: JSON.stringify(payload),
    grant_id: c.grantId,
    uid: c.uid,
    user_code: c.userCode,
    account_id: c.accountId,
    expires_at: c.expiresAt,
  }
  await db
    .insertInto('oidc_payloads')
    .values({ tenant_id: tenantId, model, id, ...values })
    .onConflict((oc) =>
      oc.columns(['tenant_id', 'model', 'id']).doUpdateSet({ ...values, consumed_at: null }),
    )
    .execute()
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

/**
 * Deletes every provider payload of one user (sessions, grants, codes and tokens): their Tessera sign-ins
 * ended, so what the provider issued on them ends too (contract section 23).
 */
export async function deleteAccountPayloads(db: Kysely<Database>, tenantId: string, accountId: string) {
  await db
    .deleteFrom('oidc_payloads')
    .where('tenant_id', '=', tenantId)
    .where('account_id', '=', accountId)
    .execute()
}

/** Deletes up to `limit` expired payloads; how many it deleted (retention). */
export async function sweepExpiredPayloads(db: Kysely<Database>, now: Date, limit: number): Promise<number> {
  const r = await sql<{ n: number }>`with gone as (
      delete from oidc_payloads where ctid in (
        select ctid from oidc_payloads where expires_at < ${now} limit ${limit})
      returning 1)
    select count(*)::int as n from gone`.execute(db)
  return r.rows[0]?.n ?? 0
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
