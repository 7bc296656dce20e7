import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
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
    })
    .onConflict((oc) => oc.column('key_hash').doNothing())
    .returning('id')
    .executeTakeFirst()
  return row ? { id: row.id, value } : null
}
