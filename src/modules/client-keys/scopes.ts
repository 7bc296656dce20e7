import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import { AppError } from '../../errors.js'
import { holds, type Principal } from '../../security/principal.js'
import { tenantPermissions } from '../permissions/queries.js'

/** The tenant a key lives in, as far as the scope rules need it. */
export interface KeyTenant {
  readonly id: string
  readonly isPlatform: boolean
}

/**
 * Every scope name that exists in a tenant, with its description: the built-in and custom permissions,
 * plus `resource:*` for each resource that has one (a wildcard exists while some permission of its
 * resource does: docs/decisions.md D3). Includes `admin:*`, which only the platform tenant may give.
 */
export async function scopeCatalogue(
  db: Kysely<Database>,
  tenantId: string,
): Promise<Map<string, string | null>> {
  const rows = await tenantPermissions(db, tenantId)
  const out = new Map<string, string | null>()
  for (const r of rows) out.set(r.name, r.description)
  for (const r of rows) {
    const wildcard = `${r.resource}:*`
    if (!out.has(wildcard)) out.set(wildcard, `Every ${r.resource} permission`)
  }
  return out
}

/** The scopes `actor` could give a key of its own tenant, sorted by name. */
export async function givableScopes(db: Kysely<Database>, actor: Principal) {
  const catalogue = await scopeCatalogue(db, actor.tenantId)
  return [...catalogue.entries()]
    .filter(([scope]) => (scope !== 'admin:*' || actor.isPlatform) && holds(actor.permissions, scope))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([scope, description]) => ({ scope, description }))
}

/**
 * May `actor` give these scopes to a key of `tenant`? Each must exist there (else PERMISSION_NOT_FOUND),
 * `admin:*` only in the platform tenant and every scope held by the caller's own set (else FORBIDDEN).
 */
export async function assertMayGiveScopes(
  db: Kysely<Database>,
  actor: Principal,
  tenant: KeyTenant,
  scopes: readonly string[],
): Promise<void> {
  const catalogue = await scopeCatalogue(db, tenant.id)
  const unknown = scopes.filter((s) => !catalogue.has(s))
  if (unknown.length > 0) throw new AppError('PERMISSION_NOT_FOUND', `Unknown scope: ${unknown.join(', ')}`)
  if (!tenant.isPlatform && scopes.includes('admin:*')) {
    throw new AppError('FORBIDDEN', 'admin:* can be given only inside the platform tenant')
  }
  assertHoldsAll(actor, scopes)
}

/** FORBIDDEN unless the caller's own set holds every scope (wildcards count). */
export function assertHoldsAll(actor: Principal, scopes: readonly string[]): void {
  const missing = scopes.filter((s) => !holds(actor.permissions, s))
  if (missing.length > 0) throw new AppError('FORBIDDEN', `The caller does not hold: ${missing.join(', ')}`)
}
