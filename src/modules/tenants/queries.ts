import type { Kysely, Transaction } from 'kysely'
import type { Database } from '../../db/database.js'
import { paginate, type PageParams } from '../../db/paginate.js'

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

/** Tenant columns plus where its rows live (left join tenant_databases: host and database only). */
function tenantsWithDatabase(db: Kysely<Database>) {
  return db
    .selectFrom('tenants')
    .leftJoin('tenant_databases', 'tenant_databases.tenant_id', 'tenants.id')
    .select([
      'tenants.id',
      'tenants.code',
      'tenants.name',
      'tenants.status',
      'tenants.auth_config',
      'tenants.created_at',
      'tenants.updated_at',
      'tenant_databases.host as db_host',
      'tenant_databases.database_name as db_name',
    ])
}

export type TenantListRow = Awaited<
  ReturnType<ReturnType<typeof tenantsWithDatabase>['executeTakeFirstOrThrow']>
>

/** Escapes LIKE wildcards so a search term matches literally. */
function likeLiteral(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`)
}

export interface TenantFilter {
  /** Only this tenant (callers outside the platform see their own tenant only). */
  onlyId?: string
  status?: 'ACTIVE' | 'INACTIVE'
  /** Case-insensitive substring of code or name. */
  q?: string
}

/** One page of tenants, newest first, with the total matching the filter. Never returns metadata. */
export function listTenantRows(db: Kysely<Database>, f: TenantFilter, page: PageParams) {
  let q = tenantsWithDatabase(db)
  if (f.onlyId !== undefined) q = q.where('tenants.id', '=', f.onlyId)
  if (f.status !== undefined) q = q.where('tenants.status', '=', f.status)
  if (f.q !== undefined) {
    const pattern = `%${likeLiteral(f.q)}%`
    q = q.where((eb) => eb.or([eb('tenants.code', 'ilike', pattern), eb('tenants.name', 'ilike', pattern)]))
  }
  return paginate(q.orderBy('tenants.created_at', 'desc').orderBy('tenants.id', 'desc'), page)
}

/** One tenant with where its rows live, or undefined. */
export function findTenantWithDatabase(db: Kysely<Database>, id: string) {
  return tenantsWithDatabase(db).where('tenants.id', '=', id).executeTakeFirst()
}

/** Locks a tenant row for a read-modify-write of its auth_config or metadata. Requires a transaction. */
export function lockTenant(trx: Transaction<Database>, id: string) {
  return trx.selectFrom('tenants').select(tenantColumns).where('id', '=', id).forUpdate().executeTakeFirst()
}
