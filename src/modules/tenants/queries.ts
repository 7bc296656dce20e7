import type { Kysely, Transaction } from 'kysely'
import { sql } from 'kysely'
import type { Database } from '../../db/database.js'

export const tenantColumns = [
  'id',
  'code',
  'name',
  'status',
  'auth_config',
  'metadata',
  'created_at',
  'updated_at',
] as const

/** One tenant by id, or undefined. Tenants always live in the main database. */
export function findTenantById(db: Kysely<Database>, id: string) {
  return db.selectFrom('tenants').select(tenantColumns).where('id', '=', id).executeTakeFirst()
}

/** One tenant by code, case-insensitively (codes are stored lowercase). */
export function findTenantByCode(db: Kysely<Database>, code: string) {
  return db
    .selectFrom('tenants')
    .select(tenantColumns)
    .where('code', '=', code.toLowerCase())
    .executeTakeFirst()
}

/** Inserts a tenant row; the caller creates its built-in roles in the same transaction. */
export function insertTenant(
  trx: Transaction<Database> | Kysely<Database>,
  t: { code: string; name: string; status: 'ACTIVE' | 'INACTIVE'; authConfig: object },
) {
  return trx
    .insertInto('tenants')
    .values({
      code: t.code.toLowerCase(),
      name: t.name,
      status: t.status,
      auth_config: JSON.stringify(t.authConfig),
    })
    .returning(tenantColumns)
    .executeTakeFirstOrThrow()
}

/** Creates the built-in `admin` (level 100) and `user` (level 0) roles of a tenant. */
export async function insertBuiltinRoles(trx: Transaction<Database> | Kysely<Database>, tenantId: string) {
  return trx
    .insertInto('roles')
    .values([
      {
        tenant_id: tenantId,
        name: 'admin',
        description: 'Tenant administrator',
        level: 100,
        is_system: true,
      },
      {
        tenant_id: tenantId,
        name: 'user',
        description: 'Default role of registered users',
        level: 0,
        is_system: true,
      },
    ])
    .returning(['id', 'name'])
    .execute()
}

/** Touches updated_at; used after any tenant change. */
export function touchTenant(trx: Kysely<Database>, id: string) {
  return trx
    .updateTable('tenants')
    .set({ updated_at: sql`now()` })
    .where('id', '=', id)
    .execute()
}
