import { AppError } from '../errors.js'

/**
 * Who is acting: on a request, as established by the credential layer (`request.principal`, a user or a
 * Client Key); at the operator CLI, the operator.
 */
export type Principal = UserPrincipal | KeyPrincipal | OperatorPrincipal

interface PrincipalBase {
  readonly tenantId: string
  readonly tenantCode: string
  /** True when the credential belongs to the platform tenant (PLATFORM_TENANT_CODE). */
  readonly isPlatform: boolean
  /** The credential's own permission set: the token's claims as issued, or the key's scopes. */
  readonly permissions: ReadonlySet<string>
}

export interface UserPrincipal extends PrincipalBase {
  readonly kind: 'user'
  readonly userId: string
  readonly sessionId: string
  readonly roles: readonly string[]
  /**
   * `auth_time`: seconds since the epoch of the login that opened the session (kept across refreshes);
   * null when the token carries none (one minted elsewhere with the tenant's secret).
   */
  readonly authTime: number | null
  /** The verified access-token claims. */
  readonly claims: Readonly<Record<string, unknown>>
}

export interface KeyPrincipal extends PrincipalBase {
  readonly kind: 'client_key'
  readonly keyId: string
  /**
   * The user whose authority stands behind the key: the user who created it, or, for a key made by a
   * key, that key's; null for the operator's keys (CLI, bootstrap).
   */
  readonly behalfUserId: string | null
  /**
   * Every user who has received a value of the key (contract section 26): its creator and each user who
   * rotated it; a key made or rotated by a key adds that key's set. The key may change the credentials of
   * none of them. Empty for the operator's keys.
   */
  readonly behindUserIds: readonly string[]
}

/**
 * The operator at the CLI: acts in the platform tenant with `admin:*`, like a platform administrator,
 * with no user or key behind it (audit rows and `created_by` name no actor). Never set on a request.
 */
export interface OperatorPrincipal extends PrincipalBase {
  readonly kind: 'operator'
}

/** The operator principal for the platform tenant (the CLI calls the API's services with it). */
export function operatorPrincipal(platform: { id: string; code: string }): OperatorPrincipal {
  return {
    kind: 'operator',
    tenantId: platform.id,
    tenantCode: platform.code,
    isPlatform: true,
    permissions: new Set(['admin:*']),
  }
}

/**
 * Platform powers: held only by credentials of the platform tenant. Whoever holds a tenant's own HS256
 * secret can sign any claims, so a claim alone never carries them outside the platform tenant.
 */
export const PLATFORM_ONLY: ReadonlySet<string> = new Set(['admin:*', 'tenants:create', 'tenants:delete'])

// Sets built for credentials outside the platform tenant; `holds` never lets a wildcard reach a
// platform power through them (a forged `tenants:*` must not grant `tenants:delete`).
const tenantScoped = new WeakSet<ReadonlySet<string>>()

/**
 * The permission set of a credential (a token's claims or a key's scopes). Outside the platform tenant
 * the platform powers are dropped, whatever the credential says; this is the one place that decides it.
 */
export function credentialPermissions(names: Iterable<string>, isPlatform: boolean): ReadonlySet<string> {
  if (isPlatform) return new Set(names)
  const set = new Set<string>()
  for (const name of names) if (!PLATFORM_ONLY.has(name)) set.add(name)
  tenantScoped.add(set)
  return set
}

/** True when `set` grants `permission`: exact, its `resource:*`, or `admin:*`. */
export function holds(set: ReadonlySet<string>, permission: string): boolean {
  if (set.has(permission) || set.has('admin:*')) return true
  const colon = permission.indexOf(':')
  if (colon <= 0 || !set.has(`${permission.slice(0, colon)}:*`)) return false
  return !(PLATFORM_ONLY.has(permission) && tenantScoped.has(set))
}

/** True when the principal holds `admin:*` (only possible in the platform tenant). */
export function isSuperAdmin(p: Principal): boolean {
  return p.isPlatform && p.permissions.has('admin:*')
}

/**
 * The user a credential stands for: an access token's own user, a Client Key's creator (through the
 * keys that made it), or null for the operator and the operator's keys.
 */
export function credentialUser(p: Principal): string | null {
  if (p.kind === 'user') return p.userId
  return p.kind === 'client_key' ? p.behalfUserId : null
}

/**
 * The users behind a credential, deduplicated: an access token's own user; a Client Key's `behindUserIds`
 * and `behalfUserId`; nobody for the operator. A key made or rotated by this credential hands its value to
 * all of them.
 */
export function usersBehind(p: Principal): readonly string[] {
  if (p.kind === 'user') return [p.userId]
  if (p.kind === 'operator') return []
  const ids = new Set(p.behindUserIds)
  if (p.behalfUserId !== null) ids.add(p.behalfUserId)
  return [...ids]
}

/**
 * The own-user rule (contract sections 22 and 26), the one check of every act that changes a user's
 * password, second factor, passkeys, email, username or status, or unlocks a user: FORBIDDEN, `hint` saying
 * where to go, when the user is behind the credential (see usersBehind). Those change through `/me`, with
 * proof, or by another principal. Holds whatever the permissions (`admin:*` included) and whatever the
 * hierarchy rule, which exempts acts on oneself, says; call it before anything is written.
 */
export function assertNotOwnUser(p: Principal, userId: string, hint: string): void {
  if (usersBehind(p).includes(userId)) throw new AppError('FORBIDDEN', hint)
}

/** The audit actor fields for a principal. */
export function actorOf(p: Principal | null | undefined): {
  actor_type: 'user' | 'client_key' | null
  actor_id: string | null
} {
  if (!p || p.kind === 'operator') return { actor_type: null, actor_id: null }
  return p.kind === 'user'
    ? { actor_type: 'user', actor_id: p.userId }
    : { actor_type: 'client_key', actor_id: p.keyId }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the credential layer on every non-public route; absent on public ones. */
    principal?: Principal
    /** A verified Client Key that its IP or origin allowlist refused (for its usage log). */
    refusedKey?: { tenantId: string; keyId: string }
  }
}
