import type { Kysely, Transaction } from 'kysely'
import type { Database } from '../../db/database.js'
import { defaultAuthConfig, mergeAuthConfig, type AuthConfig } from '../../security/auth-config.js'
import { insertBuiltinRoles, insertUserRoles } from '../roles/queries.js'
import { insertUser } from '../users/queries.js'
import { insertTenant } from './queries.js'

/**
 * Creates a tenant with its built-in roles (and, optionally, a first admin user holding `admin`) in one
 * transaction. The caller hashes the admin password beforehand (off the event loop). `also` runs last in
 * the same transaction (the first key pair of a tenant created asymmetric), so nothing is half-written.
 */
export async function provisionTenant(
  db: Kysely<Database>,
  t: {
    code: string
    name: string
    status?: 'ACTIVE' | 'INACTIVE'
    authConfig?: Partial<AuthConfig> | Record<string, unknown>
    admin?: { email: string | null; username: string | null; cpf_cnpj: string | null; passwordHash: string }
  },
  also?: (trx: Transaction<Database>, tenantId: string) => Promise<void>,
) {
  const authConfig = mergeAuthConfig(defaultAuthConfig(), t.authConfig as Record<string, unknown> | undefined)
  return db.transaction().execute(async (trx) => {
    const tenant = await insertTenant(trx, {
      code: t.code,
      name: t.name,
      status: t.status ?? 'ACTIVE',
      authConfig,
    })
    const roles = await insertBuiltinRoles(trx, tenant.id)
    let adminUserId: string | undefined
    if (t.admin) {
      const user = await insertUser(trx, {
        tenant_id: tenant.id,
        email: t.admin.email,
        username: t.admin.username,
        cpf_cnpj: t.admin.cpf_cnpj,
        password_hash: t.admin.passwordHash,
        email_verified: false,
      })
      const adminRole = roles.find((r) => r.name === 'admin')
      if (adminRole) await insertUserRoles(trx, tenant.id, user.id, [adminRole.id])
      adminUserId = user.id
    }
    if (also) await also(trx, tenant.id)
    return { tenant, adminUserId }
  })
}
