import { sql, type Kysely, type Selectable } from 'kysely'
import {
  jsonb,
  type Database,
  type PublishableKeyStatus,
  type PublishableKeysTable,
} from '../../db/database.js'
import { paginate, type PageParams } from '../../db/paginate.js'

// The publishable_keys and signup_challenges_used tables (migration 0012), both in the main database.

/** The columns of a key as the API shows it (the value included: it is public). */
export const keyColumns = [
  'id',
  'tenant_id',
  'name',
  'key',
  'allowed_origins',
  'default_roles',
  'signups_per_hour',
  'status',
  'created_at',
  'created_by',
  'revoked_at',
] as const

export type PublishableKeyRow = Pick<Selectable<PublishableKeysTable>, (typeof keyColumns)[number]>

export interface NewPublishableKey {
  tenantId: string
  name: string
  key: string
  allowedOrigins: readonly string[]
  defaultRoles: readonly string[]
  signupsPerHour: number
  /** The creating user; null (or absent) for a Client Key or the operator. */
  createdBy?: string | null
}

/** Stores a new key; undefined when its value already exists (a fresh value has 256 random bits). */
export function insertPublishableKey(db: Kysely<Database>, k: NewPublishableKey) {
  return db
    .insertInto('publishable_keys')
    .values({
      tenant_id: k.tenantId,
      name: k.name,
      key: k.key,
      allowed_origins: jsonb(k.allowedOrigins),
      default_roles: jsonb(k.defaultRoles),
      signups_per_hour: k.signupsPerHour,
      created_by: k.createdBy ?? null,
    })
    .onConflict((oc) => oc.column('key').doNothing())
    .returning(keyColumns)
    .executeTakeFirst()
}

/** One key of the tenant, or undefined (another tenant's id is the same as an unknown one). */
export function findPublishableKey(db: Kysely<Database>, tenantId: string, id: string) {
  return db
    .selectFrom('publishable_keys')
    .select(keyColumns)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/** One page of the tenant's keys, newest first, with the total. */
export function listPublishableKeys(
  db: Kysely<Database>,
  tenantId: string,
  status: PublishableKeyStatus | undefined,
  page: PageParams,
) {
  let q = db.selectFrom('publishable_keys').where('tenant_id', '=', tenantId)
  if (status) q = q.where('status', '=', status)
  return paginate(q.select(keyColumns).orderBy('created_at', 'desc').orderBy('id', 'desc'), page)
}

export interface PublishableKeyChanges {
  name?: string
  allowedOrigins?: readonly string[]
  defaultRoles?: readonly string[]
  signupsPerHour?: number
}

/** Applies the given changes (lists replaced) to one key of the tenant; undefined when there is none. */
export function updatePublishableKey(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
  c: PublishableKeyChanges,
) {
  return db
    .updateTable('publishable_keys')
    .set({
      ...(c.name !== undefined ? { name: c.name } : {}),
      ...(c.allowedOrigins !== undefined ? { allowed_origins: jsonb(c.allowedOrigins) } : {}),
      ...(c.defaultRoles !== undefined ? { default_roles: jsonb(c.defaultRoles) } : {}),
      ...(c.signupsPerHour !== undefined ? { signups_per_hour: c.signupsPerHour } : {}),
      updated_at: sql<Date>`now()`,
    })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returning(keyColumns)
    .executeTakeFirst()
}

/** Revokes one key of the tenant; idempotent (the first `revoked_at` stays). Undefined when there is none. */
export async function revokePublishableKey(db: Kysely<Database>, tenantId: string, id: string, at: Date) {
  const row = await db
    .updateTable('publishable_keys')
    .set({ status: 'REVOKED', revoked_at: at, updated_at: sql<Date>`now()` })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', '<>', 'REVOKED')
    .returning(keyColumns)
    .executeTakeFirst()
  return row ?? findPublishableKey(db, tenantId, id)
}

/** The key with this value and its tenant's code and status, for a sign-up; undefined when unknown. */
export function findKeyByValue(db: Kysely<Database>, value: string) {
  return db
    .selectFrom('publishable_keys')
    .innerJoin('tenants', 'tenants.id', 'publishable_keys.tenant_id')
    .select([
      'publishable_keys.id',
      'publishable_keys.tenant_id',
      'tenants.code as tenant_code',
      'tenants.status as tenant_status',
      'publishable_keys.allowed_origins',
      'publishable_keys.default_roles',
      'publishable_keys.signups_per_hour',
      'publishable_keys.status',
    ])
    .where('publishable_keys.key', '=', value)
    .executeTakeFirst()
}

/** Whether some active key of an active tenant lists `origin` (a preflight names no key). */
export async function anyActiveKeyAllows(db: Kysely<Database>, origin: string): Promise<boolean> {
  const { rows } = await sql<{ one: number }>`select 1 as one from publishable_keys k
    join tenants t on t.id = k.tenant_id
    where k.status = 'ACTIVE' and t.status = 'ACTIVE' and k.allowed_origins @> ${jsonb([origin])}::jsonb
    limit 1`.execute(db)
  return rows.length > 0
}

/**
 * Records an ALTCHA solution as used, until its challenge expires. True for the first caller only: the
 * primary key makes concurrent uses of one solution one winner.
 */
export async function recordUsedChallenge(
  db: Kysely<Database>,
  signature: string,
  expiresAt: Date,
): Promise<boolean> {
  const row = await db
    .insertInto('signup_challenges_used')
    .values({ signature, expires_at: expiresAt })
    .onConflict((oc) => oc.column('signature').doNothing())
    .returning('signature')
    .executeTakeFirst()
  return row !== undefined
}

/** Retention: used solutions whose challenge expired before `now` (they can no longer verify anyway). */
export async function deleteExpiredChallenges(db: Kysely<Database>, now: Date): Promise<number> {
  const r = await db.deleteFrom('signup_challenges_used').where('expires_at', '<', now).executeTakeFirst()
  return Number(r.numDeletedRows)
}
