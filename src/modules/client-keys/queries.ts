import { sql, type ExpressionBuilder, type Kysely, type Selectable } from 'kysely'
import { jsonb, type ClientKeyStatus, type ClientKeysTable, type Database } from '../../db/database.js'
import { paginate, type PageParams } from '../../db/paginate.js'
import { keyPrefix, newClientKeyValue, sha256Hex } from '../../lib/tokens.js'

export interface NewKey {
  tenantId: string
  name: string
  scopes: readonly string[]
  ipAllowlist?: readonly string[]
  originAllowlist?: readonly string[]
  expiresAt?: Date | null
  /** A given value (bootstrap); otherwise a fresh random one is made. */
  value?: string
  createdBy?: { type: 'user' | 'client_key'; id: string } | null
  /** The user whose authority stands behind the key (client_keys.behalf_user_id); null: the operator's. */
  behalfUserId?: string | null
  /** Every user who receives the value (client_keys.behind_user_ids); none for the operator's keys. */
  behindUserIds?: readonly string[]
}

/**
 * Stores a new Client Key (its SHA-256 only) and returns the row id with the value, which is never
 * stored or shown again. Returns null when `value` was given and a key with it already exists.
 */
export async function insertClientKey(
  db: Kysely<Database>,
  k: NewKey,
): Promise<{ id: string; value: string } | null> {
  const value = k.value ?? newClientKeyValue()
  const row = await db
    .insertInto('client_keys')
    .values({
      tenant_id: k.tenantId,
      name: k.name,
      prefix: keyPrefix(value),
      key_hash: sha256Hex(value),
      scopes: JSON.stringify(k.scopes),
      ip_allowlist: JSON.stringify(k.ipAllowlist ?? []),
      origin_allowlist: JSON.stringify(k.originAllowlist ?? []),
      status: 'ACTIVE',
      expires_at: k.expiresAt ?? null,
      created_by_type: k.createdBy?.type ?? null,
      created_by_id: k.createdBy?.id ?? null,
      behalf_user_id: k.behalfUserId ?? null,
      behind_user_ids: jsonb([...new Set(k.behindUserIds ?? [])]),
    })
    .onConflict((oc) => oc.column('key_hash').doNothing())
    .returning('id')
    .executeTakeFirst()
  return row ? { id: row.id, value } : null
}

/** The columns a key's DTO needs; never the hashes. */
export const keyColumns = [
  'id',
  'tenant_id',
  'name',
  'prefix',
  'scopes',
  'ip_allowlist',
  'origin_allowlist',
  'status',
  'expires_at',
  'last_used_at',
  'created_at',
  'revoked_at',
  'created_by_type',
  'created_by_id',
] as const

export type KeyRow = Pick<Selectable<ClientKeysTable>, (typeof keyColumns)[number]>

export interface KeyFilter {
  tenantId?: string
  status?: ClientKeyStatus
  /** Only these keys (at most 100: the document's limit). */
  ids?: readonly string[]
}

// Why computed, not stored: a key expires by the clock, with no write; the stored status stays ACTIVE
// and every reader (DTO, filter) derives EXPIRED from `expires_at` and the same `now`.
function statusIs(status: ClientKeyStatus, now: Date) {
  return (eb: ExpressionBuilder<Database, 'client_keys'>) => {
    if (status === 'REVOKED') return eb('status', '=', 'REVOKED')
    if (status === 'ACTIVE') {
      return eb.and([
        eb('status', '=', 'ACTIVE'),
        eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]),
      ])
    }
    return eb.or([
      eb('status', '=', 'EXPIRED'),
      eb.and([eb('status', '=', 'ACTIVE'), eb('expires_at', '<=', now)]),
    ])
  }
}

/** One page of keys (of one tenant, or of all when `tenantId` is absent), newest first, with the total. */
export function listKeys(db: Kysely<Database>, f: KeyFilter, now: Date, page: PageParams) {
  let q = db.selectFrom('client_keys')
  if (f.tenantId) q = q.where('tenant_id', '=', f.tenantId)
  if (f.status) q = q.where(statusIs(f.status, now))
  if (f.ids) q = q.where('id', 'in', [...f.ids])
  return paginate(q.select(keyColumns).orderBy('created_at', 'desc').orderBy('id', 'desc'), page)
}

/** One key of the tenant, or undefined (another tenant's id is the same as an unknown one). */
export function findKey(db: Kysely<Database>, tenantId: string, id: string) {
  return db
    .selectFrom('client_keys')
    .select(keyColumns)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/** The row of a just-inserted key (insertClientKey returns its id only). */
export function findKeyById(db: Kysely<Database>, id: string) {
  return db.selectFrom('client_keys').select(keyColumns).where('id', '=', id).executeTakeFirstOrThrow()
}

export interface KeyChanges {
  name?: string
  scopes?: readonly string[]
  ipAllowlist?: readonly string[]
  originAllowlist?: readonly string[]
  expiresAt?: Date
}

/** Applies the given changes (lists replaced) to one key of the tenant; undefined when there is none. */
export function updateKey(db: Kysely<Database>, tenantId: string, id: string, c: KeyChanges) {
  return db
    .updateTable('client_keys')
    .set({
      ...(c.name !== undefined ? { name: c.name } : {}),
      ...(c.scopes !== undefined ? { scopes: jsonb(c.scopes) } : {}),
      ...(c.ipAllowlist !== undefined ? { ip_allowlist: jsonb(c.ipAllowlist) } : {}),
      ...(c.originAllowlist !== undefined ? { origin_allowlist: jsonb(c.originAllowlist) } : {}),
      ...(c.expiresAt !== undefined ? { expires_at: c.expiresAt } : {}),
      updated_at: sql<Date>`now()`,
    })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returning(keyColumns)
    .executeTakeFirst()
}

/**
 * Revokes one key of the tenant (its rotated-out value too). Idempotent: an already revoked key keeps
 * its first `revoked_at`. Undefined when the tenant has no such key.
 */
export async function revokeKey(db: Kysely<Database>, tenantId: string, id: string, at: Date) {
  const row = await db
    .updateTable('client_keys')
    .set({
      status: 'REVOKED',
      revoked_at: at,
      previous_key_hash: null,
      previous_key_expires_at: null,
      updated_at: sql<Date>`now()`,
    })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', '<>', 'REVOKED')
    .returning(keyColumns)
    .executeTakeFirst()
  return row ?? findKey(db, tenantId, id)
}

/**
 * Gives one key of the tenant a new value (stores its hash and prefix). With `graceUntil` the current
 * value becomes the previous one, honoured until then; without it the current value stops at once.
 * `receivers` (the users who get the new value) join `behind_user_ids`, each once.
 */
export function rotateKey(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
  value: string,
  graceUntil: Date | null,
  receivers: readonly string[],
) {
  // Why in this UPDATE, from the row's own column: two rotations at once must both be recorded; a set
  // computed from an earlier read would lose one of them.
  const added = sql<string>`behind_user_ids || (select coalesce(jsonb_agg(r.id), '[]'::jsonb)
    from jsonb_array_elements_text(${jsonb([...new Set(receivers)])}::jsonb) as r(id)
    where not (behind_user_ids ? r.id))`
  return db
    .updateTable('client_keys')
    .set((eb) => ({
      key_hash: sha256Hex(value),
      prefix: keyPrefix(value),
      previous_key_hash: graceUntil ? eb.ref('key_hash') : null,
      previous_key_expires_at: graceUntil,
      behind_user_ids: added,
      updated_at: sql<Date>`now()`,
    }))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returning(keyColumns)
    .executeTakeFirst()
}

/** The tenant's usable Client Keys: ACTIVE and not expired at `now` (tenant metrics). */
export async function countActiveKeys(db: Kysely<Database>, tenantId: string, now: Date): Promise<number> {
  const row = await db
    .selectFrom('client_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('status', '=', 'ACTIVE')
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/**
 * Revokes every unrevoked key of the tenant that the user is behind (in behind_user_ids, or its behalf
 * user), rotated-out values too; returns how many. Main database: call it after the tenant's commit.
 */
export async function revokeKeysBehindUser(db: Kysely<Database>, tenantId: string, userId: string, at: Date) {
  const rows = await db
    .updateTable('client_keys')
    .set({
      status: 'REVOKED',
      revoked_at: at,
      previous_key_hash: null,
      previous_key_expires_at: null,
      updated_at: sql<Date>`now()`,
    })
    .where('tenant_id', '=', tenantId)
    .where('status', '<>', 'REVOKED')
    .where((eb) =>
      eb.or([
        sql<boolean>`behind_user_ids @> jsonb_build_array(${userId}::text)`,
        eb('behalf_user_id', '=', userId),
      ]),
    )
    .returning('id')
    .execute()
  return rows.length
}
