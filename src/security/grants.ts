import type { Selectable } from 'kysely'
import type { JsonRow, UsersTable } from '../db/database.js'

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

/** One row of grantQueryParts (modules/permissions/grant-queries.ts), or the caller's `user` row. */
export type GrantRow = {
  kind: 'user' | 'role' | 'rp' | 'direct' | 'all'
  role: string | null
  name: string
  level: number
}

/** Splits rows of grantQueryParts plus one optional `kind = 'user'` row (JSON text in `name`). */
export function userAndGrants<U>(rows: GrantRow[], isPlatform: boolean): { user: U | null; grants: Grants } {
  const userRow = rows.find((r) => r.kind === 'user')
  return { user: userRow ? (JSON.parse(userRow.name) as U) : null, grants: grantsFrom(rows, isPlatform) }
}

/** A user row (every column but password_hash, as grantRows selects) as row_to_json renders it. */
export type UserJson = JsonRow<Omit<Selectable<UsersTable>, 'password_hash'>>

/** Roles, rank and effective permissions from a user's grant rows (`user` rows skipped). */
export function grantsFrom(rows: GrantRow[], isPlatform: boolean): Grants {
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
