import type { TenantInfo } from '../../context.js'
import type { AppContext } from '../../context.js'
import { isUniqueViolation } from '../../lib/db-errors.js'
import type { RequestMeta } from '../audit/write.js'
import { writeAudit } from '../audit/write.js'
import type { IdentityProviderRow } from '../identity-providers/queries.js'
import { signupRoles } from '../publishable-keys/roles.js'
import { insertUserRoles } from '../roles/queries.js'
import { normalizeUsername } from '../../lib/identifiers.js'
import { findUsersByEmail, insertUser, NO_PASSWORD, usernameTaken } from '../users/queries.js'
import * as q from './queries.js'
import type { UpstreamPerson } from './upstream.js'

// Whose account a provider's person is (contract section 24, "Whose account it is"). An identity is
// (tenant, provider, subject), never the email; an unverified email never links an account and never
// marks one verified.

/** The user a sign-in ends with, or the `#error` code the flow ends with (nothing written then). */
export type AccountOutcome =
  | {
      user: {
        id: string
        email: string | null
        username: string | null
        status: string
        email_verified: boolean
        otp_enabled: boolean
      }
    }
  | { error: 'account_not_linked' | 'signup_disabled' | 'user_inactive'; userId?: string }

/** The sign-up's rollback when its identity was linked by a concurrent flow. */
class IdentityTaken extends Error {}

/** Whether the email's domain is one the provider may sign up (any, when the list is empty). */
function domainAllowed(p: IdentityProviderRow, email: string): boolean {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase()
  return p.allowed_domains.length === 0 || p.allowed_domains.includes(domain)
}

/**
 * 1. a known identity signs in its user; 2. `linking: verified_email` links the one user whose verified email
 * equals the provider's verified one; 3. `allowSignup` within the allowed domains makes a user (no password,
 * the provider's default roles); 4. otherwise `account_not_linked` (an account has that email) or
 * `signup_disabled`.
 */
export async function accountFor(
  ctx: AppContext,
  tenant: TenantInfo,
  p: IdentityProviderRow,
  person: UpstreamPerson,
  meta: RequestMeta,
): Promise<AccountOutcome> {
  const db = ctx.dbs.forTenant(tenant.id)
  const now = new Date(ctx.clock.now())
  const linked = await q.findLinkedUser(db, tenant.id, p.id, person.subject)
  if (linked) {
    await q.touchIdentity(db, tenant.id, linked.identity_id, person.email, now)
    return { user: linked }
  }
  const verified = person.email !== null && (person.emailVerified || p.trust_email)
  const holders = person.email ? await findUsersByEmail(db, tenant.id, person.email) : []
  if (p.linking === 'verified_email' && verified && holders.length === 1 && holders[0]?.email_verified) {
    const user = holders[0]
    // Why before the link: a flow that ends in an error writes nothing, an inactive holder's identity included.
    if (user.status !== 'ACTIVE') return { error: 'user_inactive', userId: user.id }
    const link = {
      tenantId: tenant.id,
      userId: user.id,
      providerId: p.id,
      subject: person.subject,
      email: person.email,
      now,
    }
    if (await q.insertIdentity(db, link)) {
      await writeAudit(db, {
        tenantId: tenant.id,
        action: 'IDENTITY_LINKED',
        success: true,
        userId: user.id,
        // The person linked it, by signing in at the provider with the verified address.
        actorUserId: user.id,
        metadata: { providerId: p.id, reason: 'verified_email' },
        meta,
      })
    }
    return { user }
  }
  if (holders.length > 0) return { error: 'account_not_linked' }
  if (!p.allow_signup || !person.email || !domainAllowed(p, person.email)) return { error: 'signup_disabled' }
  const roles = await signupRoles(db, tenant, p.default_roles)
  // The provider's username is kept when it is a valid one nobody in the tenant holds; else the user has none.
  const wanted = person.username ? normalizeUsername(person.username) : null
  const username = wanted && !(await usernameTaken(db, tenant.id, wanted)) ? wanted : null
  try {
    const user = await db.transaction().execute(async (trx) => {
      const row = await insertUser(trx, {
        tenant_id: tenant.id,
        email: person.email,
        username,
        password_hash: NO_PASSWORD,
        email_verified: verified,
      })
      await insertUserRoles(
        trx,
        tenant.id,
        row.id,
        roles.map((r) => r.id),
      )
      const inserted = await q.insertIdentity(trx, {
        tenantId: tenant.id,
        userId: row.id,
        providerId: p.id,
        subject: person.subject,
        email: person.email,
        now,
      })
      // Another first sign-in of the same person linked it meanwhile: no user without its identity.
      if (!inserted) throw new IdentityTaken()
      await writeAudit(trx, {
        tenantId: tenant.id,
        action: 'REGISTER',
        success: true,
        userId: row.id,
        metadata: { via: 'federated', providerId: p.id },
        meta,
      })
      return row
    })
    return { user: { ...user, username: user.username ?? null } }
  } catch (err) {
    // Two first sign-ins of one person at once: the other one made the user; this flow asks again.
    if (isUniqueViolation(err) || err instanceof IdentityTaken) return { error: 'account_not_linked' }
    throw err
  }
}
