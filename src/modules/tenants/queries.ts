import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely'
import type { Database } from '../../db/database.js'
import { paginate, type PageParams } from '../../db/paginate.js'
import { defaultAuthConfig, type AuthConfig } from '../../security/auth-config.js'

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

/** Sets a tenant's name and status (those given) and touches updated_at; its id, or undefined when gone. */
export function updateTenantRow(
  trx: Transaction<Database>,
  tenantId: string,
  input: { name?: string; status?: 'ACTIVE' | 'INACTIVE' },
  now: Date,
) {
  return trx
    .updateTable('tenants')
    .set({
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.status !== undefined ? { status: input.status } : {}),
      updated_at: now,
    })
    .where('id', '=', tenantId)
    .returning('id')
    .executeTakeFirst()
}

/** Stores a tenant's whole auth_config (resolved: every key set) and touches updated_at. */
export async function setAuthConfig(
  trx: Transaction<Database>,
  tenantId: string,
  config: AuthConfig,
  now: Date,
): Promise<void> {
  await trx
    .updateTable('tenants')
    .set({ auth_config: JSON.stringify(config), updated_at: now })
    .where('id', '=', tenantId)
    .execute()
}

/** A tenant's metadata (the secrets' and signing keys' rotation records), or undefined. */
export function findTenantMetadata(db: Kysely<Database>, tenantId: string) {
  return db.selectFrom('tenants').select('metadata').where('id', '=', tenantId).executeTakeFirst()
}

/** Replaces a tenant's metadata. */
export async function setTenantMetadata(
  trx: Kysely<Database>,
  tenantId: string,
  metadata: Record<string, unknown>,
): Promise<void> {
  await trx
    .updateTable('tenants')
    .set({ metadata: JSON.stringify(metadata) })
    .where('id', '=', tenantId)
    .execute()
}

/** A tenant row's refresh-token lifetime in seconds (its stored one, else the default every tenant starts from). */
const REFRESH_LIFETIME = sql<number>`coalesce((auth_config->>'refreshTokenExpiresIn')::integer, ${
  defaultAuthConfig().refreshTokenExpiresIn
})`

/** Every tenant's refresh-token lifetime as the derived table `l(tenant_id, secs)`, read in the sweep's statement. */
export function refreshLifetimes(): RawBuilder<unknown> {
  return sql`(select id as tenant_id, ${REFRESH_LIFETIME} as secs from tenants) l`
}

/** These tenants' refresh-token lifetimes in seconds (for a routed database, whose copies may be stale). */
export function findRefreshLifetimes(db: Kysely<Database>, tenantIds: string[]) {
  return db
    .selectFrom('tenants')
    .select(['id', REFRESH_LIFETIME.as('secs')])
    .where('id', 'in', tenantIds)
    .execute()
}
