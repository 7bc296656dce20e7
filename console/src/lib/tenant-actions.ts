import { covers } from './permissions.js'

/** What a tenant's page offers its reader. */
export interface TenantActions {
  rename: boolean
  /** Deactivate or reactivate. */
  status: boolean
  remove: boolean
}

/**
 * What a caller may do on a tenant's page, by the service's rules (modules/tenants/service.ts), so the page
 * never offers what would be refused. `own`: the tenant is the caller's.
 * - Another tenant: only a platform admin (`admin:*`) reaches it at all.
 * - Its name: with `tenants:update`.
 * - Its status and its deletion: never one's own. A platform admin's own tenant is the platform tenant,
 *   which cannot be deactivated or deleted; a tenant admin never holds `tenants:delete` (a platform
 *   power), and deactivating its own tenant would sign everyone out, itself too, with no way back in.
 */
export function tenantActions(held: readonly string[], own: boolean): TenantActions {
  const platformAdmin = held.includes('admin:*')
  if (!own && !platformAdmin) return { rename: false, status: false, remove: false }
  const update = covers(held, 'tenants:update')
  return { rename: update, status: update && !own, remove: !own && platformAdmin }
}
