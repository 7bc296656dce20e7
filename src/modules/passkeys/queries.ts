import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from '../../db/database.js'
import { paginate, type PageParams } from '../../db/paginate.js'

// The passkeys module's tables: passkeys and passkey_challenges (migration 0013).

type Db = Kysely<Database>

/** The columns a passkey is shown with (never its public key or credential id). */
const shownColumns = ['id', 'name', 'created_at', 'last_used_at', 'backed_up', 'transports'] as const

/** Stores a challenge (its SHA-256): a registration's bound to its user, a login's to none. */
export async function insertChallenge(
  db: Db,
  c: {
    tenantId: string
    userId: string | null
    purpose: 'register' | 'login'
    hash: string
    expiresAt: Date
  },
): Promise<void> {
  await db
    .insertInto('passkey_challenges')
    .values({
      tenant_id: c.tenantId,
      user_id: c.userId,
      purpose: c.purpose,
      challenge_hash: c.hash,
      expires_at: c.expiresAt,
    })
    .execute()
}

/**
 * Uses a challenge up: deletes it, and says whether it was alive at `now`. An expired one is deleted all
 * the same; one of another tenant, purpose or user is left alone and answers false. Of concurrent callers
 * with one challenge, one gets true.
 */
export async function takeChallenge(
  db: Db,
  c: { tenantId: string; userId: string | null; purpose: 'register' | 'login'; hash: string; now: Date },
): Promise<boolean> {
  let q = db
    .deleteFrom('passkey_challenges')
    .where('tenant_id', '=', c.tenantId)
    .where('challenge_hash', '=', c.hash)
    .where('purpose', '=', c.purpose)
  q = c.userId === null ? q.where('user_id', 'is', null) : q.where('user_id', '=', c.userId)
  const row = await q.returning('expires_at').executeTakeFirst()
  return row !== undefined && new Date(row.expires_at).getTime() > c.now.getTime()
}

/** Retention: challenges past their life; how many went. */
export async function deleteExpiredChallenges(db: Db, now: Date): Promise<number> {
  const r = await db.deleteFrom('passkey_challenges').where('expires_at', '<', now).executeTakeFirst()
  return Number(r.numDeletedRows)
}

/** One page of a user's passkeys, newest first. */
export function listPasskeys(db: Db, tenantId: string, userId: string, page: PageParams) {
  const q = db
    .selectFrom('passkeys')
    .select(shownColumns)
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
  return paginate(q, page)
}

/** The credential ids and transports of a user's passkeys (a registration's `excludeCredentials`). */
export function credentialsOf(db: Db, tenantId: string, userId: string) {
  return db
    .selectFrom('passkeys')
    .select(['credential_id', 'transports'])
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .execute()
}

/** Stores a verified passkey; undefined when its credential id is already registered in the tenant. */
export function insertPasskey(
  trx: Transaction<Database>,
  p: {
    tenantId: string
    userId: string
    credentialId: string
    publicKey: string
    counter: number
    transports: string[]
    deviceType: 'singleDevice' | 'multiDevice'
    backedUp: boolean
    name: string
  },
) {
  return trx
    .insertInto('passkeys')
    .values({
      tenant_id: p.tenantId,
      user_id: p.userId,
      credential_id: p.credentialId,
      public_key: p.publicKey,
      counter: p.counter,
      transports: sql<string[]>`${p.transports}::text[]`,
      device_type: p.deviceType,
      backed_up: p.backedUp,
      name: p.name,
    })
    .onConflict((oc) => oc.columns(['tenant_id', 'credential_id']).doNothing())
    .returning(shownColumns)
    .executeTakeFirst()
}

/**
 * The passkey of a credential id within the tenant, with its user's login columns, in one statement (a
 * join on the users module's table: a login reads both, and one round trip is its cost).
 */
export function findPasskeyForLogin(db: Db, tenantId: string, credentialId: string) {
  return db
    .selectFrom('passkeys')
    .innerJoin('users', 'users.id', 'passkeys.user_id')
    .select([
      'passkeys.id',
      'passkeys.public_key',
      'passkeys.counter',
      'passkeys.transports',
      'users.id as user_id',
      'users.email',
      'users.username',
      'users.cpf_cnpj',
      'users.status',
      'users.email_verified',
    ])
    .where('passkeys.tenant_id', '=', tenantId)
    .where('passkeys.credential_id', '=', credentialId)
    .where('users.tenant_id', '=', tenantId)
    .executeTakeFirst()
}

/**
 * Records a login with a passkey: its new counter, backed-up flag and last use, only while its counter is
 * still `seen` (false otherwise: another login with it got in between).
 */
export async function recordPasskeyUse(
  db: Db,
  u: { tenantId: string; id: string; seen: string; counter: number; backedUp: boolean; now: Date },
): Promise<boolean> {
  const row = await db
    .updateTable('passkeys')
    .set({ counter: u.counter, backed_up: u.backedUp, last_used_at: u.now })
    .where('tenant_id', '=', u.tenantId)
    .where('id', '=', u.id)
    .where('counter', '=', u.seen)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

/** Renames one of a user's passkeys; undefined when the user has no such passkey. */
export function renamePasskey(db: Db, tenantId: string, userId: string, id: string, name: string) {
  return db
    .updateTable('passkeys')
    .set({ name })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .returning(shownColumns)
    .executeTakeFirst()
}

/** Deletes one of a user's passkeys; false when the user has no such passkey. */
export async function deletePasskey(db: Db, tenantId: string, userId: string, id: string): Promise<boolean> {
  const row = await db
    .deleteFrom('passkeys')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}

/** Deletes every passkey of a user (the first proof of a mailbox, contract section 26); returns how many. */
export async function deleteUserPasskeys(db: Db, tenantId: string, userId: string): Promise<number> {
  const rows = await db
    .deleteFrom('passkeys')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .returning('id')
    .execute()
  return rows.length
}
