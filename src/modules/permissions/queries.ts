import { sql, type Kysely, type Selectable, type Transaction } from 'kysely'
import type { Database, PermissionsTable, Unqualified } from '../../db/database.js'
import { paginate, type PageParams } from '../../db/paginate.js'
import { fail } from '../../errors.js'

/*
 * Wildcards. `r:*` exists in a tenant while some permission of resource `r` exists there (built-in or the
 * tenant's custom ones); it is not part of the catalogue. Grants need a permissions row to point at, so a
 * wildcard gets a row of the tenant the first time it is granted or put in a role ("materialized"), and
 * that row is deleted, with its grants, when the last permission of its resource goes. Such rows are never
 * listed (`isListed`) and cannot be changed or deleted through the API. `admin:*` is a built-in row of its
 * own, not a wildcard of this kind.
 */

export const permissionColumns = [
  'permissions.id',
  'permissions.tenant_id',
  'permissions.name',
  'permissions.resource',
  'permissions.action',
  'permissions.description',
  'permissions.is_system',
  'permissions.created_at',
] as const

/** A permission row as `permissionColumns` selects it. */
export type PermissionRow = Pick<
  Selectable<PermissionsTable>,
  Unqualified<(typeof permissionColumns)[number]>
>

/** The `Permission` object of the document (openapi/components/permissions.yaml). */
export function toPermissionDto(row: PermissionRow) {
  return {
    id: row.id,
    name: row.name,
    resource: row.resource,
    action: row.action,
    description: row.description,
    isSystem: row.is_system,
    tenantId: row.tenant_id,
    createdAt: new Date(row.created_at).toISOString(),
  }
}

export const SUPER_ADMIN = 'admin:*'

/** `resource` and `action` of a name already checked against the PermissionName pattern. */
export function splitName(name: string): { resource: string; action: string } {
  const i = name.indexOf(':')
  return { resource: name.slice(0, i), action: name.slice(i + 1) }
}

/** True for `r:*` other than `admin:*` (a materialized wildcard when it is a row). */
export function isWildcard(name: string): boolean {
  return name.endsWith(':*') && name !== SUPER_ADMIN
}

/** Rows visible in the tenant: the built-in catalogue and the tenant's own. */
function visibleIn(tenantId: string) {
  return sql<boolean>`(permissions.tenant_id is null or permissions.tenant_id = ${tenantId})`
}

/** Rows the API lists and edits: everything visible but materialized wildcards. */
function listedIn(tenantId: string) {
  return sql<boolean>`${visibleIn(tenantId)} and not (permissions.action = '*' and permissions.tenant_id is not null)`
}

/** One page of the tenant's permissions (built-in and custom, or custom only), newest first. */
export function listPermissions(
  db: Kysely<Database>,
  tenantId: string,
  customOnly: boolean,
  page: PageParams,
) {
  let q = db.selectFrom('permissions').where(listedIn(tenantId))
  if (customOnly) q = q.where('permissions.tenant_id', '=', tenantId)
  const ordered = q
    .select(permissionColumns)
    .orderBy('permissions.created_at', 'desc')
    .orderBy('permissions.name', 'asc')
  return paginate(ordered, page)
}

/**
 * Locks a listed permission (FOR UPDATE) until the transaction ends: built-in, or custom of this tenant
 * (another tenant's id is undefined).
 */
export function lockPermission(trx: Transaction<Database>, tenantId: string, id: string) {
  return trx
    .selectFrom('permissions')
    .select(permissionColumns)
    .where('permissions.id', '=', id)
    .where(listedIn(tenantId))
    .forUpdate()
    .executeTakeFirst()
}

/** A visible permission row by name (built-in, custom or materialized wildcard of this tenant). */
export function findPermissionByName(db: Kysely<Database>, tenantId: string, name: string) {
  return db
    .selectFrom('permissions')
    .select(permissionColumns)
    .where('permissions.name', '=', name)
    .where(visibleIn(tenantId))
    .executeTakeFirst()
}

/** The resources among `resources` that have a permission in the tenant other than a wildcard. */
async function livingResources(
  db: Kysely<Database>,
  tenantId: string,
  resources: string[],
): Promise<Set<string>> {
  if (resources.length === 0) return new Set()
  const rows = await db
    .selectFrom('permissions')
    .select('permissions.resource')
    .distinct()
    .where(visibleIn(tenantId))
    .where('permissions.action', '<>', '*')
    .where('permissions.resource', 'in', resources)
    .execute()
  return new Set(rows.map((r) => r.resource))
}

/**
 * Which of `names` exist in the tenant (built-in, custom, or a wildcard of a resource that has a
 * permission there: docs/decisions.md D3). Returns the names that do not.
 */
async function missingPermissions(
  db: Kysely<Database>,
  tenantId: string,
  names: readonly string[],
): Promise<string[]> {
  const wanted = [...new Set(names)]
  if (wanted.length === 0) return []
  const plain = wanted.filter((n) => !isWildcard(n))
  const found = new Set<string>()
  if (plain.length > 0) {
    const rows = await db
      .selectFrom('permissions')
      .select('permissions.name')
      .where(visibleIn(tenantId))
      .where('permissions.action', '<>', '*')
      .where('permissions.name', 'in', plain)
      .execute()
    for (const r of rows) found.add(r.name)
    // `admin:*` is the one built-in row whose action is `*`.
    if (plain.includes(SUPER_ADMIN)) found.add(SUPER_ADMIN)
  }
  const wild = wanted.filter(isWildcard)
  const living = await livingResources(
    db,
    tenantId,
    wild.map((n) => splitName(n).resource),
  )
  for (const n of wild) if (living.has(splitName(n).resource)) found.add(n)
  return wanted.filter((n) => !found.has(n))
}

/** PERMISSION_NOT_FOUND, naming them, unless every name exists in the tenant (see missingPermissions). */
export async function assertPermissionsExist(
  db: Kysely<Database>,
  tenantId: string,
  names: readonly string[],
): Promise<void> {
  const missing = await missingPermissions(db, tenantId, names)
  if (missing.length > 0) fail('PERMISSION_NOT_FOUND', `Permission not found: ${missing.join(', ')}`)
}

/**
 * Rows for names that exist in the tenant (check with missingPermissions first). With `materialize`,
 * a wildcard without a row yet gets one; otherwise it is left out (nothing can be granted through it).
 */
export async function permissionRows(
  db: Kysely<Database>,
  tenantId: string,
  names: readonly string[],
  materialize: boolean,
): Promise<Map<string, PermissionRow>> {
  const wanted = [...new Set(names)]
  const out = new Map<string, PermissionRow>()
  if (wanted.length === 0) return out
  const load = async () => {
    const rows = await db
      .selectFrom('permissions')
      .select(permissionColumns)
      .where(visibleIn(tenantId))
      .where('permissions.name', 'in', wanted)
      .execute()
    for (const r of rows) out.set(r.name, r)
  }
  await load()
  const absent = wanted.filter((n) => !out.has(n) && isWildcard(n))
  if (materialize && absent.length > 0) {
    const builtinResources = await db
      .selectFrom('permissions')
      .select('resource')
      .distinct()
      .where('tenant_id', 'is', null)
      .where(
        'resource',
        'in',
        absent.map((n) => splitName(n).resource),
      )
      .execute()
    const builtin = new Set(builtinResources.map((r) => r.resource))
    await db
      .insertInto('permissions')
      .values(
        absent.map((name) => {
          const { resource, action } = splitName(name)
          return {
            tenant_id: tenantId,
            name,
            resource,
            action,
            description: `Every action of ${resource}`,
            is_system: builtin.has(resource),
          }
        }),
      )
      // Why: two requests may materialize the same wildcard at once; the second keeps the first's row.
      .onConflict((oc) => oc.columns(['tenant_id', 'name']).where('tenant_id', 'is not', null).doNothing())
      .execute()
    await load()
  }
  return out
}

/**
 * Deletes the tenant's materialized wildcard of `resource` (and so every grant of it) when no other
 * permission of that resource exists there any more.
 */
export async function dropOrphanWildcard(
  db: Kysely<Database>,
  tenantId: string,
  resource: string,
): Promise<void> {
  if ((await livingResources(db, tenantId, [resource])).has(resource)) return
  await db
    .deleteFrom('permissions')
    .where('tenant_id', '=', tenantId)
    .where('resource', '=', resource)
    .where('action', '=', '*')
    .execute()
}

/** Inserts a custom permission; a unique violation means the name is taken in the tenant. */
export function insertCustomPermission(
  db: Kysely<Database>,
  tenantId: string,
  p: { name: string; description: string | null },
) {
  const { resource, action } = splitName(p.name)
  return db
    .insertInto('permissions')
    .values({
      tenant_id: tenantId,
      name: p.name,
      resource,
      action,
      description: p.description,
      is_system: false,
    })
    .returning(permissionColumns)
    .executeTakeFirstOrThrow()
}

/** Changes a custom permission of the tenant (never a built-in one: tenant_id must match). */
export function updateCustomPermission(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
  p: { name?: string; description?: string | null },
) {
  const set: { name?: string; resource?: string; action?: string; description?: string | null } = {}
  if (p.name !== undefined) Object.assign(set, { name: p.name }, splitName(p.name))
  if (p.description !== undefined) set.description = p.description
  return db
    .updateTable('permissions')
    .set(set)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returning(permissionColumns)
    .executeTakeFirstOrThrow()
}

/** Deletes a custom permission of the tenant; role and direct grants of it cascade. */
export async function deleteCustomPermission(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
): Promise<void> {
  await db.deleteFrom('permissions').where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

/** Grants a permission row to a user directly; granting one it holds directly changes nothing. */
export async function insertDirectGrant(
  db: Kysely<Database>,
  tenantId: string,
  userId: string,
  permissionId: string,
): Promise<void> {
  await db
    .insertInto('user_permissions')
    .values({ tenant_id: tenantId, user_id: userId, permission_id: permissionId })
    .onConflict((oc) => oc.columns(['user_id', 'permission_id']).doNothing())
    .execute()
}

/** Removes a direct grant; removing one the user does not hold changes nothing. */
export async function deleteDirectGrant(
  db: Kysely<Database>,
  tenantId: string,
  userId: string,
  permissionId: string,
): Promise<void> {
  await db
    .deleteFrom('user_permissions')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('permission_id', '=', permissionId)
    .execute()
}

/** The tenant's custom permissions (tenant metrics). */
export async function countCustomPermissions(db: Kysely<Database>, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('permissions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    // Why: `r:*` rows exist only to hold grants (see above); they are not custom permissions.
    .where('action', '<>', '*')
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Names (with descriptions) of the permissions that exist in a tenant: built-in and its custom ones. */
export function tenantPermissions(db: Kysely<Database>, tenantId: string) {
  return db
    .selectFrom('permissions')
    .select(['name', 'resource', 'description'])
    .where((eb) => eb.or([eb('tenant_id', 'is', null), eb('tenant_id', '=', tenantId)]))
    .execute()
}

/** Names of every permission that exists in the tenant (built-in and custom). */
export async function existingPermissionNames(db: Kysely<Database>, tenantId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('permissions')
    .select('name')
    .where((eb) => eb.or([eb('tenant_id', 'is', null), eb('tenant_id', '=', tenantId)]))
    .execute()
  return rows.map((r) => r.name)
}
