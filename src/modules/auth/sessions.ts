import { randomBytes } from 'node:crypto'
import type { Kysely, Transaction } from 'kysely'
import type { Database } from '../../db/database.js'
import { sha256Hex } from '../../lib/tokens.js'

const UUID_HEX = /^([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})$/

/**
 * A new refresh token: base64url of the tenant id (16 bytes) and 32 random bytes. Opaque to clients;
 * the tenant part lets the service find the tenant's (possibly routed) database before any lookup.
 */
export function newRefreshTokenFor(tenantId: string): string {
  return Buffer.concat([Buffer.from(tenantId.replace(/-/g, ''), 'hex'), randomBytes(32)]).toString(
    'base64url',
  )
}

/** The tenant id a refresh token was issued for, or null when the value is not one of ours. */
export function refreshTokenTenant(token: string): string | null {
  if (token.length !== 64 || !/^[A-Za-z0-9_-]+$/.test(token)) return null
  const hex = Buffer.from(token, 'base64url').subarray(0, 16).toString('hex')
  const m = UUID_HEX.exec(hex)
  return m ? `${m[1]}-${m[2]}-${m[3]}-${m[4]}-${m[5]}` : null
}

/**
 * Opens a session for a user, first revoking its oldest active sessions so that at most `max` stay
 * active. Locks the user row, so two concurrent logins of one user never exceed the limit.
 */
export async function openSession(
  trx: Transaction<Database>,
  s: {
    tenantId: string
    userId: string
    max: number
    now: Date
    expiresAt: Date
    ip: string | null
    userAgent: string | null
  },
): Promise<{ sessionId: string; refreshToken: string }> {
  await trx.selectFrom('users').select('id').where('id', '=', s.userId).forUpdate().execute()
  const active = await trx
    .selectFrom('sessions')
    .select('id')
    .where('tenant_id', '=', s.tenantId)
    .where('user_id', '=', s.userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', s.now)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute()
  const excess = active.length - (s.max - 1)
  if (excess > 0) {
    await revokeSessions(
      trx,
      s.tenantId,
      active.slice(0, excess).map((r) => r.id),
      'session_limit',
      s.now,
    )
  }
  const session = await trx
    .insertInto('sessions')
    .values({
      tenant_id: s.tenantId,
      user_id: s.userId,
      created_at: s.now,
      last_used_at: s.now,
      expires_at: s.expiresAt,
      ip: s.ip,
      user_agent: s.userAgent,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  const refreshToken = await insertRefreshToken(trx, s.tenantId, session.id, s.now, s.expiresAt)
  return { sessionId: session.id, refreshToken }
}

/** Stores a new refresh token (its SHA-256 only) for a session and returns the value. */
export async function insertRefreshToken(
  trx: Kysely<Database>,
  tenantId: string,
  sessionId: string,
  now: Date,
  expiresAt: Date,
): Promise<string> {
  const value = newRefreshTokenFor(tenantId)
  await trx
    .insertInto('refresh_tokens')
    .values({
      tenant_id: tenantId,
      session_id: sessionId,
      token_hash: sha256Hex(value),
      created_at: now,
      expires_at: expiresAt,
    })
    .execute()
  return value
}

/** Revokes sessions and every token of theirs. */
export async function revokeSessions(
  trx: Kysely<Database>,
  tenantId: string,
  sessionIds: string[],
  reason: string,
  now: Date,
): Promise<void> {
  if (sessionIds.length === 0) return
  await trx
    .updateTable('sessions')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', sessionIds)
    .where('revoked_at', 'is', null)
    .execute()
  await trx
    .updateTable('refresh_tokens')
    .set({ revoked_at: now })
    .where('tenant_id', '=', tenantId)
    .where('session_id', 'in', sessionIds)
    .where('revoked_at', 'is', null)
    .execute()
}

/** Revokes every session of a user (user deleted or deactivated). */
export async function revokeUserSessions(
  trx: Kysely<Database>,
  tenantId: string,
  userId: string,
  reason: string,
  now: Date,
) {
  const rows = await trx
    .selectFrom('sessions')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute()
  await revokeSessions(
    trx,
    tenantId,
    rows.map((r) => r.id),
    reason,
    now,
  )
}

/**
 * Consumes an active refresh token: marks it rotated and revoked in one conditional UPDATE, so of
 * concurrent callers exactly one gets the row back.
 */
export function consumeRefreshToken(trx: Transaction<Database>, tenantId: string, hash: string, now: Date) {
  return trx
    .updateTable('refresh_tokens')
    .set({ revoked_at: now, rotated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('token_hash', '=', hash)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['id', 'session_id'])
    .executeTakeFirst()
}

/** A refresh token row by hash, whatever its state (for reuse detection). */
export function findRefreshToken(db: Kysely<Database>, tenantId: string, hash: string) {
  return db
    .selectFrom('refresh_tokens')
    .innerJoin('sessions', 'sessions.id', 'refresh_tokens.session_id')
    .select([
      'refresh_tokens.id',
      'refresh_tokens.session_id',
      'refresh_tokens.rotated_at',
      'refresh_tokens.revoked_at',
      'refresh_tokens.expires_at',
      'sessions.user_id',
      'sessions.revoked_at as session_revoked_at',
    ])
    .where('refresh_tokens.tenant_id', '=', tenantId)
    .where('refresh_tokens.token_hash', '=', hash)
    .executeTakeFirst()
}
