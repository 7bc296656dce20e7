import { sql, type Insertable, type Kysely, type Transaction } from 'kysely'
import type { Database, FederationFlowsTable } from '../../db/database.js'

// The federation module's tables (contract section 24): the flows between authorize and callback, the login
// codes a callback returns, and the identities it links (user_identities).

type Db = Kysely<Database> | Transaction<Database>

/** Stores an authorize step's flow. */
export async function insertFlow(db: Db, row: Insertable<FederationFlowsTable>): Promise<void> {
  await db.insertInto('federation_flows').values(row).execute()
}

/** Takes (deletes and returns) the live flow of this state, whatever the browser: a state is used once. */
export async function takeFlow(db: Db, tenantId: string, stateHash: string, now: Date) {
  const row = await db
    .deleteFrom('federation_flows')
    .where('tenant_id', '=', tenantId)
    .where('state_hash', '=', stateHash)
    .returningAll()
    .executeTakeFirst()
  return row && row.expires_at.getTime() > now.getTime() ? row : undefined
}

/** Stores a login code (its hash) for a user, bound to the page's PKCE challenge. */
export async function insertLoginCode(
  db: Db,
  c: {
    tenantId: string
    userId: string
    providerId: string
    hash: string
    challenge: string
    expiresAt: Date
  },
): Promise<void> {
  await db
    .insertInto('federation_codes')
    .values({
      tenant_id: c.tenantId,
      user_id: c.userId,
      provider_id: c.providerId,
      code_hash: c.hash,
      code_challenge: c.challenge,
      expires_at: c.expiresAt,
    })
    .execute()
}

/** Takes (deletes and returns) a login code by its hash; undefined when unknown, used or expired. */
export async function takeLoginCode(db: Db, tenantId: string, hash: string, now: Date) {
  const row = await db
    .deleteFrom('federation_codes')
    .where('tenant_id', '=', tenantId)
    .where('code_hash', '=', hash)
    .returning(['user_id', 'provider_id', 'code_challenge', 'expires_at'])
    .executeTakeFirst()
  return row && row.expires_at.getTime() > now.getTime() ? row : undefined
}

/** The user an identity (tenant, provider, subject) is linked to, with what a login checks of it. */
export async function findLinkedUser(db: Db, tenantId: string, providerId: string, subject: string) {
  return db
    .selectFrom('user_identities as i')
    .innerJoin('users as u', (j) =>
      j.onRef('u.id', '=', 'i.user_id').onRef('u.tenant_id', '=', 'i.tenant_id'),
    )
    .select([
      'i.id as identity_id',
      'u.id',
      'u.email',
      'u.username',
      'u.status',
      'u.email_verified',
      'u.otp_enabled',
    ])
    .where('i.tenant_id', '=', tenantId)
    .where('i.provider_id', '=', providerId)
    .where('i.subject', '=', subject)
    .executeTakeFirst()
}

/** Links an identity to a user; false when that identity is linked already (to anyone). */
export async function insertIdentity(
  db: Db,
  i: {
    tenantId: string
    userId: string
    providerId: string
    subject: string
    email: string | null
    now: Date
  },
): Promise<boolean> {
  const row = await db
    .insertInto('user_identities')
    .values({
      tenant_id: i.tenantId,
      user_id: i.userId,
      provider_id: i.providerId,
      subject: i.subject,
      email: i.email,
      last_used_at: i.now,
    })
    .onConflict((oc) => oc.columns(['tenant_id', 'provider_id', 'subject']).doNothing())
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

/** Records an identity's sign-in (its last use and the email the provider gave this time). */
export async function touchIdentity(
  db: Db,
  tenantId: string,
  identityId: string,
  email: string | null,
  now: Date,
) {
  await db
    .updateTable('user_identities')
    .set({ last_used_at: now, email })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', identityId)
    .execute()
}

/** Stores a link token (its SHA-256) for a user. */
export async function insertLinkToken(
  db: Db,
  t: { tenantId: string; userId: string; hash: string; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('federation_link_tokens')
    .values({ tenant_id: t.tenantId, user_id: t.userId, token_hash: t.hash, expires_at: t.expiresAt })
    .execute()
}

/** Takes (deletes) a live link token; its user, or undefined for an unknown, used or expired one. */
export async function takeLinkToken(db: Db, tenantId: string, hash: string, now: Date) {
  const row = await db
    .deleteFrom('federation_link_tokens')
    .where('tenant_id', '=', tenantId)
    .where('token_hash', '=', hash)
    .returning(['user_id', 'expires_at'])
    .executeTakeFirst()
  return row && row.expires_at.getTime() > now.getTime() ? row.user_id : undefined
}

/** A user's linked identities with their providers' names, oldest first. */
export async function listIdentities(db: Db, tenantId: string, userId: string) {
  return db
    .selectFrom('user_identities as i')
    .innerJoin('identity_providers as p', (j) =>
      j.onRef('p.id', '=', 'i.provider_id').onRef('p.tenant_id', '=', 'i.tenant_id'),
    )
    .select(['i.id', 'i.provider_id', 'p.name as provider_name', 'i.subject', 'i.email', 'i.created_at'])
    .where('i.tenant_id', '=', tenantId)
    .where('i.user_id', '=', userId)
    .orderBy('i.created_at')
    .orderBy('i.id')
    .execute()
}

/** Deletes one of a user's identities; whether it existed. */
export async function deleteIdentity(db: Db, tenantId: string, userId: string, id: string): Promise<boolean> {
  const r = await db
    .deleteFrom('user_identities')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst()
  return Number(r.numDeletedRows) > 0
}

/**
 * Removes every identity linked to a user and its pending link tokens (a first proof of the mailbox,
 * contract section 26: whatever someone set up on an account made with another person's address goes).
 */
export async function deleteUserIdentities(db: Db, tenantId: string, userId: string): Promise<void> {
  await db
    .deleteFrom('user_identities')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .execute()
  await db
    .deleteFrom('federation_link_tokens')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .execute()
}

/** Deletes at most `limit` flows and codes past their expiry (the retention sweep); how many went. */
export async function sweepFederation(db: Kysely<Database>, now: Date, limit: number): Promise<number> {
  const r = await sql<{ n: number }>`with flows as (
      delete from federation_flows where id in (
        select id from federation_flows where expires_at <= ${now} limit ${limit})
      returning 1),
    codes as (
      delete from federation_codes where id in (
        select id from federation_codes where expires_at <= ${now} limit ${limit})
      returning 1),
    links as (
      delete from federation_link_tokens where id in (
        select id from federation_link_tokens where expires_at <= ${now} limit ${limit})
      returning 1)
    select ((select count(*) from flows) + (select count(*) from codes) + (select count(*) from links))::int as n`.execute(
    db,
  )
  return r.rows[0]?.n ?? 0
}
