import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely'
import type { Database, JsonRow, UsersTable } from '../db/database.js'

/** A user's roles and effective permissions, as stored now. */
export interface Grants {
  readonly roles: string[]
  /** Highest level among the user's roles (its rank); -1 with no role. */
  readonly rank: number
  readonly permissions: string[]
  readonly direct: string[]
  readonly fromRoles: { role: string; permissions: string[] }[]
}

// Why: a tenant admin never holds these; `admin:*` only in the platform tenant (docs/decisions.md D5).
const NEVER_FOR_TENANT_ADMIN = new Set(['admin:*', 'tenants:create', 'tenants:delete'])

/** The permission set of the built-in `admin` role, from the names of the permissions that exist. */
export function adminPermissions(existing: readonly string[], isPlatform: boolean): string[] {
  if (isPlatform) return ['admin:*']
  const out = new Set<string>()
  for (const name of existing) {
    const resource = name.slice(0, name.indexOf(':'))
    // Why skip wildcard rows: they only hold grants (see modules/permissions/queries.ts); the admin's
    // wildcards are derived from the resources below, so a stored `tenants:*` row must not reach a tenant
    // admin.
    // Why skip resource `admin`: its wildcard is `admin:*`, which only the platform admin holds.
    if (NEVER_FOR_TENANT_ADMIN.has(name) || name.endsWith(':*') || resource === 'admin') continue
    out.add(name)
    if (resource !== 'tenants') out.add(`${resource}:*`)
  }
  return [...out].sort()
}

/** One row of grantQueryParts (or the caller's `user` row). */
export type GrantRow = {
  kind: 'user' | 'role' | 'rp' | 'direct' | 'all'
  role: string | null
  name: string
  level: number
}

/**
 * The grant rows of one user as parts of a statement: the `ur` CTE and the union of selects after it.
 * `user` is SQL for the user's id: a parameter, or a subquery of a larger statement (a refresh reads
 * the grants in the same statement that rotates the token). Rows: the user's roles with their levels,
 * role grants, direct grants, and for the built-in admin role every permission of the tenant.
 */
export function grantQueryParts(tenantId: string, user: RawBuilder<unknown>) {
  return {
    cte: sql`ur as (
      select r.id, r.name, r.level, r.is_system
      from user_roles x join roles r on r.id = x.role_id
      where x.user_id = ${user} and x.tenant_id = ${tenantId}
    )`,
    selects: sql`
    select 'role' as kind, ur.name as role, ur.name as name, ur.level as level from ur
    union all
    select 'rp', ur.name, p.name, 0 from ur
      join role_permissions rp on rp.role_id = ur.id join permissions p on p.id = rp.permission_id
    union all
    select 'direct', null, p.name, 0 from user_permissions up join permissions p on p.id = up.permission_id
      where up.user_id = ${user} and up.tenant_id = ${tenantId}
    union all
    select 'all', null, p.name, 0 from permissions p
      where exists (select 1 from ur where ur.is_system and ur.name = 'admin')
        and (p.tenant_id is null or p.tenant_id = ${tenantId})`,
  }
}

/**
 * One round trip for roles, rank and effective permissions, plus, when asked, the user row itself as
 * JSON (GET /me needs both and is on the hot path).
 */
function grantRows(db: Kysely<Database>, tenantId: string, userId: string, withUser: boolean) {
  const userRow = withUser
    ? sql`select 'user' as kind, null as role, row_to_json(u)::text as name, 0 as level from (
        select id, tenant_id, email, username, cpf_cnpj, status, email_verified, otp_enabled,
               created_at, updated_at, last_login_at
        from users where tenant_id = ${tenantId} and id = ${userId}) u
      union all`
    : sql``
  const { cte, selects } = grantQueryParts(tenantId, sql`${userId}`)
  return sql<GrantRow>`with ${cte} ${userRow} ${selects}`.execute(db)
}

/** Computes roles, rank and effective permissions of one user in one round trip. */
export async function loadGrants(
  db: Kysely<Database>,
  tenantId: string,
  userId: string,
  isPlatform: boolean,
): Promise<Grants> {
  return grantsFrom((await grantRows(db, tenantId, userId, false)).rows, isPlatform)
}

/** The user row (no password hash; timestamps as ISO strings) and its grants, in one round trip. */
export async function loadUserWithGrants(
  db: Kysely<Database>,
  tenantId: string,
  userId: string,
  isPlatform: boolean,
): Promise<{ user: UserJson | null; grants: Grants }> {
  return userAndGrants<UserJson>((await grantRows(db, tenantId, userId, true)).rows, isPlatform)
}

/** Splits rows of grantQueryParts plus one optional `kind = 'user'` row (JSON text in `name`). */
export function userAndGrants<U>(rows: GrantRow[], isPlatform: boolean): { user: U | null; grants: Grants } {
  const userRow = rows.find((r) => r.kind === 'user')
  return { user: userRow ? (JSON.parse(userRow.name) as U) : null, grants: grantsFrom(rows, isPlatform) }
}

/** A user row (every column but password_hash, as grantRows selects) as row_to_json renders it. */
export type UserJson = JsonRow<Omit<Selectable<UsersTable>, 'password_hash'>>

function grantsFrom(rows: GrantRow[], isPlatform: boolean): Grants {
  const roles: string[] = []
  let rank = -1
  const byRole = new Map<string, string[]>()
  const direct: string[] = []
  const existing: string[] = []
  for (const r of rows) {
    if (r.kind === 'user') continue
    if (r.kind === 'role') {
      roles.push(r.name)
      rank = Math.max(rank, Number(r.level))
      if (!byRole.has(r.name)) byRole.set(r.name, [])
    } else if (r.kind === 'rp') byRole.get(r.role ?? '')?.push(r.name)
    else if (r.kind === 'direct') direct.push(r.name)
    else existing.push(r.name)
  }
  if (existing.length > 0 || roles.includes('admin')) {
    const admin = byRole.get('admin')
    if (admin) admin.push(...adminPermissions(existing, isPlatform))
  }
  const all = new Set<string>(direct)
  for (const perms of byRole.values()) for (const p of perms) all.add(p)
  return {
    roles: roles.sort(),
    rank,
    permissions: [...all].sort(),
    direct: [...new Set(direct)].sort(),
    fromRoles: [...byRole.entries()].map(([role, permissions]) => ({
      role,
      permissions: [...new Set(permissions)].sort(),
    })),
  }
}
