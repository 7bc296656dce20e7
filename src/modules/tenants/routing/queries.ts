import type { TenantDatabaseInfo } from '../../../context.js'
import { sql, type Kysely, type QueryResult, type RawBuilder, type Transaction } from 'kysely'
import type { Database } from '../../../db/database.js'
import { purgeRollups } from '../../audit/rollup-queries.js'

// The SQL of tenant routing: the stored routes (tenant_databases, in the main database), and moving a
// tenant's rows between two databases of the same schema.

/** `PUT /tenants/:id/database`'s answer: where the tenant's rows live; never credentials. */
/** Every stored route: tenant id and encrypted URL. */
export function listRoutes(main: Kysely<Database>) {
  return main.selectFrom('tenant_databases').select(['tenant_id', 'url_enc']).execute()
}

/** The tenant's stored route, encrypted URL only, or undefined. */
export function findRouteUrl(main: Kysely<Database>, tenantId: string) {
  return main
    .selectFrom('tenant_databases')
    .select('url_enc')
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst()
}

/** The tenant's routing as the API shows it (host and database name only). */
export async function routeInfo(main: Kysely<Database>, tenantId: string): Promise<TenantDatabaseInfo> {
  const row = await main
    .selectFrom('tenant_databases')
    .select(['host', 'database_name'])
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst()
  return { tenantId, dedicated: !!row, host: row?.host ?? null, database: row?.database_name ?? null }
}

/** Removes the tenant's stored route (back to the main database). */
export async function deleteRoute(db: Kysely<Database>, tenantId: string): Promise<void> {
  await db.deleteFrom('tenant_databases').where('tenant_id', '=', tenantId).execute()
}

/** Stores the tenant's route, replacing the one stored before. */
export async function upsertRoute(
  db: Kysely<Database>,
  r: { tenantId: string; urlEnc: string; host: string; database: string; now: Date },
): Promise<void> {
  await db
    .insertInto('tenant_databases')
    .values({ tenant_id: r.tenantId, url_enc: r.urlEnc, host: r.host, database_name: r.database })
    .onConflict((oc) =>
      oc.column('tenant_id').doUpdateSet({
        url_enc: r.urlEnc,
        host: r.host,
        database_name: r.database,
        updated_at: r.now,
      }),
    )
    .execute()
}

/** True when the database answers a query on `tenants`. */
export async function answers(db: Kysely<Database>): Promise<boolean> {
  try {
    await db.selectFrom('tenants').select('id').limit(1).execute()
    return true
  } catch {
    return false
  }
}

// Moving a tenant's rows between two databases of the same schema. Rows travel as JSON (`to_jsonb` out,
// `jsonb_populate_recordset` in), so timestamps keep their microseconds and jsonb stays jsonb whatever
// the driver does with types.

interface TableSpec {
  readonly name: keyof Database
  /** Primary key columns (all uuid): the keyset the copy pages by. */
  readonly key: readonly string[]
  /** Has a permission_id column that may point at a built-in permission (ids differ per database). */
  readonly permissionRef?: boolean
  /**
   * Rows are never deleted by a move, only by retention; a copy skips the ids the target holds already
   * (a tenant that moved out and back finds its earlier rows there).
   */
  readonly appendOnly?: boolean
}

/**
 * Audit rows: copied last, and brought home when a tenant is deleted. The copies left behind stay until
 * retention removes them (the service's role cannot delete audit rows: docs/decisions.md D17).
 */
export const AUDIT_TABLE: TableSpec = { name: 'tessera_audit.audit_log', key: ['id'], appendOnly: true }

/**
 * The tenant-scoped tables, parents first. Client Keys, their usage, secrets and routing stay in the
 * main database; built-in permissions (tenant_id null) exist in every database already.
 */
export const TENANT_TABLES: readonly TableSpec[] = [
  { name: 'users', key: ['id'] },
  { name: 'roles', key: ['id'] },
  { name: 'permissions', key: ['id'] },
  { name: 'role_permissions', key: ['role_id', 'permission_id'], permissionRef: true },
  { name: 'user_roles', key: ['user_id', 'role_id'] },
  { name: 'user_permissions', key: ['user_id', 'permission_id'], permissionRef: true },
  { name: 'sessions', key: ['id'] },
  { name: 'refresh_tokens', key: ['id'] },
  { name: 'user_otp', key: ['user_id'] },
  { name: 'otp_recovery_codes', key: ['id'] },
  { name: 'mfa_tokens', key: ['id'] },
  { name: 'email_tokens', key: ['id'] },
  { name: 'mail_outbox', key: ['id'] },
  { name: 'passkeys', key: ['id'] },
  { name: 'passkey_challenges', key: ['id'] },
  { name: 'oauth_clients', key: ['id'] },
  { name: 'identity_providers', key: ['id'] },
  { name: 'user_identities', key: ['id'] },
  { name: 'federation_flows', key: ['id'] },
  { name: 'federation_codes', key: ['id'] },
  { name: 'federation_link_tokens', key: ['id'] },
  AUDIT_TABLE,
]

const PAGE_ROWS = 1000

type Row = Record<string, unknown>

/** Pages through one table's rows of a tenant in key order; reads within the caller's snapshot. */
async function* tenantRows(
  db: Kysely<Database>,
  spec: TableSpec,
  tenantId: string,
  since?: Date,
): AsyncGenerator<Row[]> {
  const keyRefs = sql.join(spec.key.map((k) => sql.ref(`t.${k}`)))
  const recent = since ? sql`and t.created_at >= ${since}` : sql``
  let after: unknown[] | null = null
  for (;;) {
    const from: unknown[] | null = after
    const cond: RawBuilder<unknown> = from
      ? sql`and (${keyRefs}) > (${sql.join(from.map((v) => sql`${v}::uuid`))})`
      : sql``
    const result: QueryResult<{ r: Row | string }> = await sql<{ r: Row | string }>`select to_jsonb(t) as r
      from ${sql.table(spec.name)} t where t.tenant_id = ${tenantId} ${recent} ${cond}
      order by ${keyRefs} limit ${PAGE_ROWS}`.execute(db)
    if (result.rows.length === 0) return
    const page: Row[] = result.rows.map((x) => (typeof x.r === 'string' ? (JSON.parse(x.r) as Row) : x.r))
    yield page
    const last = page[page.length - 1]
    if (!last || page.length < PAGE_ROWS) return
    after = spec.key.map((k) => last[k])
  }
}

async function insertRows(db: Kysely<Database>, spec: TableSpec, rows: Row[], ignoreConflicts: boolean) {
  const [first] = rows
  if (!first) return
  const table = spec.name
  const cols = sql.join(Object.keys(first).map((c) => sql.ref(c)))
  const conflict = spec.appendOnly
    ? sql`on conflict (id) do nothing`
    : ignoreConflicts
      ? sql`on conflict do nothing`
      : sql``
  await sql`insert into ${sql.table(table)} (${cols})
    select ${cols} from jsonb_populate_recordset(null::${sql.table(table)}, ${JSON.stringify(rows)}::jsonb)
    ${conflict}`.execute(db)
}

/** Built-in permission ids by name. */
async function builtinPermissionIds(db: Kysely<Database>): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('permissions')
    .select(['id', 'name'])
    .where('tenant_id', 'is', null)
    .execute()
  return new Map(rows.map((r) => [r.name, r.id]))
}

/** Maps a source built-in permission id to the target's id of the same name; custom ids travel as they are. */
async function permissionIdMapper(src: Kysely<Database>, dst: Kysely<Database>) {
  const [from, to] = await Promise.all([builtinPermissionIds(src), builtinPermissionIds(dst)])
  const map = new Map<string, string>()
  for (const [name, id] of from) {
    const target = to.get(name)
    if (!target) throw new Error(`built-in permission ${name} is missing in the target database`)
    map.set(id, target)
  }
  return (id: unknown) => (typeof id === 'string' ? (map.get(id) ?? id) : id)
}

/**
 * Copies every row of the tenant from `src` to `dst` (both usually transactions) and returns the row
 * count per table. With `ignoreConflicts`, rows already present in `dst` are skipped (always, for an
 * append-only table); with `since`, only rows created from then on.
 */
export async function copyTenantRows(
  src: Kysely<Database>,
  dst: Kysely<Database>,
  tenantId: string,
  opts: { tables?: readonly TableSpec[]; ignoreConflicts?: boolean; since?: Date } = {},
): Promise<Record<string, number>> {
  const tables = opts.tables ?? TENANT_TABLES
  const mapPermission = tables.some((t) => t.permissionRef) ? await permissionIdMapper(src, dst) : null
  const counts: Record<string, number> = {}
  for (const spec of tables) {
    let count = 0
    for await (const page of tenantRows(src, spec, tenantId, opts.since)) {
      if (spec.permissionRef && mapPermission) {
        for (const row of page) row.permission_id = mapPermission(row.permission_id)
      }
      await insertRows(dst, spec, page, opts.ignoreConflicts ?? false)
      count += page.length
    }
    counts[spec.name] = count
  }
  return counts
}

/**
 * Deletes every tenant-scoped row of the tenant and, with `tenantRow`, the tenant row itself. Audit rows
 * stay: only retention removes them (markRelocated records that they were copied elsewhere). Requires
 * a transaction.
 */
export async function purgeTenantRows(
  trx: Kysely<Database>,
  tenantId: string,
  opts: { tenantRow?: boolean; tables?: readonly TableSpec[] } = {},
): Promise<void> {
  const tables = opts.tables ?? TENANT_TABLES
  for (const spec of [...tables].reverse()) {
    if (spec.appendOnly) continue
    await sql`delete from ${sql.table(spec.name)} where tenant_id = ${tenantId}`.execute(trx)
  }
  // Derived from the audit rows, which a move copies: the database the tenant moves to counts anew.
  await purgeRollups(trx, tenantId)
  if (opts.tenantRow) await trx.deleteFrom('tenants').where('id', '=', tenantId).execute()
}

/**
 * Records, in a table of the audit owner, that the tenant's audit rows in this database were copied
 * to another one: they stay here until retention removes them, and nothing reads them for the tenant.
 */
export async function markRelocated(db: Kysely<Database>, tenantId: string): Promise<void> {
  await sql`select tessera_audit.mark_relocated(${tenantId}::uuid)`.execute(db)
}

/** The start of the caller's transaction by the database's clock (rows it cannot see are younger). */
export async function transactionStart(trx: Kysely<Database>): Promise<Date> {
  const { rows } = await sql<{ at: Date | string }>`select now() as at`.execute(trx)
  return new Date(rows[0]?.at ?? Date.now())
}

/** The tenant row as JSON, locked FOR UPDATE: inserts referencing the tenant wait until the caller ends. */
export async function lockTenantRow(
  trx: Transaction<Database>,
  tenantId: string,
  nowait = false,
): Promise<Row | null> {
  const wait = nowait ? sql`nowait` : sql``
  const { rows } = await sql<{ r: Row }>`select to_jsonb(t) as r from tenants t where t.id = ${tenantId}
    for update ${wait}`.execute(trx)
  const [row] = rows
  if (!row) return null
  const r = row.r
  return typeof r === 'string' ? (JSON.parse(r) as Row) : r
}

/**
 * Locks the tenant's users, roles and sessions FOR UPDATE, so writes that reference them (new sessions,
 * refresh tokens, grants) wait for the caller's transaction. Requires a transaction.
 */
export async function lockTenantParents(trx: Transaction<Database>, tenantId: string): Promise<void> {
  for (const table of ['users', 'roles', 'sessions'] as const) {
    await sql`select 1 from ${sql.table(table)} where tenant_id = ${tenantId} for update`.execute(trx)
  }
}

/** Writes (or refreshes) the copy of the tenant row a routed database needs for its foreign keys. */
export async function upsertTenantCopy(trx: Kysely<Database>, row: Row): Promise<void> {
  await sql`insert into tenants select * from jsonb_populate_record(null::tenants, ${JSON.stringify(row)}::jsonb)
    on conflict (id) do update set code = excluded.code, name = excluded.name, status = excluded.status,
      auth_config = excluded.auth_config, updated_at = excluded.updated_at`.execute(trx)
}

/**
 * Deletes the tenant row of the main database with every row it holds of the tenant except audit rows,
 * which outlive it. Returns false when there was no such tenant. Requires a transaction.
 */
export async function deleteTenantFromMain(trx: Kysely<Database>, tenantId: string): Promise<boolean> {
  // Why explicit: tenant-scoped tables are reached without a foreign key to tenants in a routed
  // database, and usage rows have none at all.
  await purgeTenantRows(trx, tenantId, { tables: TENANT_TABLES.filter((t) => t !== AUDIT_TABLE) })
  await trx.deleteFrom('client_key_usage').where('tenant_id', '=', tenantId).execute()
  // The counts of its keys' usage (no tenant column: a key's id names its tenant) go before the keys.
  const keys = sql`(select id from client_keys where tenant_id = ${tenantId})`
  await sql`delete from client_key_usage_hourly where key_id in ${keys}`.execute(trx)
  await sql`delete from client_key_usage_marks where key_id in ${keys}`.execute(trx)
  const r = await trx.deleteFrom('tenants').where('id', '=', tenantId).executeTakeFirst()
  return Number(r.numDeletedRows) > 0
}
