import { isIP } from 'node:net'
import type { Kysely } from 'kysely'
import type { FastifyRequest } from 'fastify'
import type { AuditAction, Database } from '../../db/database.js'
import type { AuditTargetType } from '../../lib/route-spec.js'
import { actorOf, type Principal } from '../../security/principal.js'
import { insertAuditRow } from './queries.js'

export type { AuditAction }

/** Where a request came from, as the audit log records it. */
export interface RequestMeta {
  readonly ip: string | null
  readonly userAgent: string | null
  /** The request's X-Request-Id (the caller's when well-formed, else generated), for correlation. */
  readonly requestId: string | null
}

/**
 * An address to record for `ip` (X-Forwarded-For per TRUST_PROXY), IPv4-mapped IPv6 unwrapped; null when it
 * is not an IP address. Why: a trusted peer's X-Forwarded-For may carry any text, which would otherwise be
 * recorded as the client's address (up to the 16 KiB header limit).
 */
export function recordedIp(ip: string | undefined): string | null {
  const unwrapped = ip?.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip
  return unwrapped && unwrapped.length <= 64 && isIP(unwrapped) !== 0 ? unwrapped : null
}

/** Request ip (see recordedIp), user agent and request id. */
export function requestMeta(req: FastifyRequest): RequestMeta {
  const ua = req.headers['user-agent']
  return {
    ip: recordedIp(req.ip),
    userAgent: typeof ua === 'string' ? ua.slice(0, 512) : null,
    requestId: req.id,
  }
}

export interface AuditEntry {
  readonly tenantId: string
  readonly action: AuditAction
  readonly success: boolean
  readonly userId?: string | null
  readonly errorMessage?: string | null
  readonly actor?: Principal | null
  /** The acting user where no principal is at hand (a federation callback finishing that user's link). */
  readonly actorUserId?: string
  readonly metadata?: {
    role?: string
    permission?: string
    reason?: string
    sessionsRevoked?: number
    lockedSeconds?: number
    /** How a REGISTER came in: `publishable_key` (POST /signup, src/modules/publishable-keys), with its key. */
    via?: 'publishable_key' | 'federated'
    keyId?: string
    /** How a PASSWORD_RESET was proven (`email`, a reset link), or how a LOGIN was tried (`passkey`). */
    method?: 'email' | 'passkey' | 'federated'
    /** The passkey a PASSKEY_ADDED or PASSKEY_REMOVED row is about. */
    passkeyId?: string
    /** The linked identity an IDENTITY_UNLINKED row is about (section 24). */
    identityId?: string
    /** An administrative event's object (contract section 25). */
    target?: {
      type: AuditTargetType
      /** Absent on a refused creation: there is no object yet. */
      id?: string
    }
    /** An OAuth client's `client_id` and, for OAUTH_TOKEN, the grant asked for (section 23). */
    clientId?: string
    grantType?: string
    /** The identity provider a row is about, or that a federated LOGIN came through (section 24). */
    providerId?: string
    /** The names of the fields the call set, never their values (section 25). */
    changed?: string[]
  }
  readonly meta: RequestMeta
}

/**
 * Appends one audit row. Pass the transaction that makes the change so both commit together; for a
 * failure row pass a handle outside any rolled-back transaction (commit, then fail).
 */
export async function writeAudit(db: Kysely<Database>, e: AuditEntry): Promise<void> {
  await insertAuditRow(db, {
    tenant_id: e.tenantId,
    user_id: e.userId ?? null,
    action: e.action,
    success: e.success,
    error_message: e.success ? null : (e.errorMessage ?? 'failed'),
    ip_address: e.meta.ip,
    user_agent: e.meta.userAgent,
    request_id: e.meta.requestId,
    ...(e.actorUserId ? { actor_type: 'user' as const, actor_id: e.actorUserId } : actorOf(e.actor)),
    metadata: JSON.stringify(e.metadata ?? {}),
  })
}
