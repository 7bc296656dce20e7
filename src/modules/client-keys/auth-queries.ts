import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'

/** The key row matching a value's hash, as current or as the rotated-out previous value. */
export function findKeyByHash(db: Kysely<Database>, hash: string) {
  return db
    .selectFrom('client_keys')
    .innerJoin('tenants', 'tenants.id', 'client_keys.tenant_id')
    .select([
      'client_keys.id',
      'client_keys.tenant_id',
      'tenants.code as tenant_code',
      'tenants.status as tenant_status',
      'client_keys.key_hash',
      'client_keys.previous_key_hash',
      'client_keys.previous_key_expires_at',
      'client_keys.scopes',
      'client_keys.ip_allowlist',
      'client_keys.origin_allowlist',
      'client_keys.status',
      'client_keys.expires_at',
      'client_keys.behalf_user_id',
      'client_keys.behind_user_ids',
    ])
    .where((eb) =>
      eb.or([eb('client_keys.key_hash', '=', hash), eb('client_keys.previous_key_hash', '=', hash)]),
    )
    .executeTakeFirst()
}
