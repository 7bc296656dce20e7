import type { Kysely } from 'kysely'
import type { Config } from '../../config.js'
import type { Database } from '../../db/database.js'
import type { PasswordHasher } from '../../lib/hashing.js'
import { normalizeEmail } from '../../lib/identifiers.js'
import { insertClientKey } from '../client-keys/queries.js'
import { isUniqueViolation } from '../../lib/db-errors.js'
import { findTenantByCode } from '../tenants/queries.js'
import { provisionTenant } from '../tenants/provision.js'
import { findRoleByName, insertUserRoles } from '../roles/queries.js'
import { findUserForLogin, insertUser } from '../users/queries.js'

// First start: what must exist before any credential can: the platform tenant, and the bootstrap key
// and admin named in the environment. Run by buildApp at every start and by the CLI's `bootstrap`.

/** Makes sure the platform tenant exists (first start); safe when two instances start at once. */
export async function ensurePlatformTenant(db: Kysely<Database>, code: string) {
  const found = await findTenantByCode(db, code)
  if (found) return found
  try {
    return (await provisionTenant(db, { code, name: 'Platform' })).tenant
  } catch (err) {
    if (!isUniqueViolation(err)) throw err
    const again = await findTenantByCode(db, code)
    if (!again) throw err
    return again
  }
}

/** Makes sure a platform Client Key with exactly this value and scope `admin:*` exists. */
export async function ensureBootstrapKey(
  db: Kysely<Database>,
  tenantId: string,
  value: string,
): Promise<boolean> {
  return (await insertClientKey(db, { tenantId, name: 'bootstrap', scopes: ['admin:*'], value })) !== null
}

/** Makes sure a platform admin user with this email exists (its password is set only on creation). */
export async function ensureBootstrapAdmin(
  db: Kysely<Database>,
  tenantId: string,
  email: string,
  password: string,
  hasher: PasswordHasher,
): Promise<{ userId: string; created: boolean }> {
  const normalized = normalizeEmail(email)
  if (!normalized) throw new Error('BOOTSTRAP_ADMIN_EMAIL is not a valid email address')
  const existing = await findUserForLogin(db, tenantId, 'email', normalized)
  if (existing) return { userId: existing.id, created: false }
  const passwordHash = await hasher.hash(password)
  return db.transaction().execute(async (trx) => {
    const user = await insertUser(trx, {
      tenant_id: tenantId,
      email: normalized,
      password_hash: passwordHash,
      email_verified: true,
    })
    const role = await findRoleByName(trx, tenantId, 'admin')
    if (!role) throw new Error('the platform tenant has no admin role')
    await insertUserRoles(trx, tenantId, user.id, [role.id])
    return { userId: user.id, created: true }
  })
}

/** Everything first start needs: the platform tenant, then the configured bootstrap key and admin. */
export async function bootstrap(db: Kysely<Database>, config: Config, hasher: PasswordHasher) {
  const platform = await ensurePlatformTenant(db, config.platformTenantCode)
  const keyCreated = config.bootstrapClientKey
    ? await ensureBootstrapKey(db, platform.id, config.bootstrapClientKey)
    : false
  const admin =
    config.bootstrapAdminEmail && config.bootstrapAdminPassword
      ? await ensureBootstrapAdmin(
          db,
          platform.id,
          config.bootstrapAdminEmail,
          config.bootstrapAdminPassword,
          hasher,
        )
      : null
  return { platformTenantId: platform.id, keyCreated, admin }
}
