import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database, EmailTokensTable, OutboxStatus } from '../../db/database.js'

type Db = Kysely<Database>
/** What a mail token is for: a reset, a verification, or an email change (its `email` is the new address). */
export type TokenPurpose = EmailTokensTable['purpose']

/** Tokens of one purpose a user was sent since `since`, used or not: the hourly cap. */
export async function countRecentTokens(
  db: Db,
  tenantId: string,
  userId: string,
  purpose: TokenPurpose,
  since: Date,
): Promise<number> {
  const row = await db
    .selectFrom('email_tokens')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('created_at', '>', since)
    .executeTakeFirst()
  return Number(row?.n ?? 0)
}

/** Voids a user's unused tokens of one purpose (a new reset request voids the earlier ones). */
export async function voidTokens(
  trx: Transaction<Database>,
  tenantId: string,
  userId: string,
  purpose: TokenPurpose,
  now: Date,
): Promise<void> {
  await trx
    .updateTable('email_tokens')
    .set({ used_at: now })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .execute()
}

/** One message for the outbox, rendered and encrypted; `tokenId` names the token it carries, if any. */
interface OutboxMail {
  outboxId: string
  tenantId: string
  tokenId: string | null
  recipient: string
  messageEnc: string
  expiresAt: Date
  now: Date
}

/** Writes an outbox row in the caller's transaction: a notice without a token, or a token's message. */
export async function insertMail(trx: Transaction<Database>, m: OutboxMail): Promise<void> {
  await trx
    .insertInto('mail_outbox')
    .values({
      id: m.outboxId,
      tenant_id: m.tenantId,
      token_id: m.tokenId,
      recipient: m.recipient,
      message_enc: m.messageEnc,
      expires_at: m.expiresAt,
      next_attempt_at: m.now,
      created_at: m.now,
    })
    .execute()
}

/** Writes a token (with the user's security_version) and the outbox row of its message, in the caller's transaction. */
export async function insertTokenAndMail(
  trx: Transaction<Database>,
  t: {
    tenantId: string
    userId: string
    purpose: TokenPurpose
    tokenHash: string
    email: string
    userVersion: number
    expiresAt: Date
    now: Date
    outboxId: string
    messageEnc: string
  },
): Promise<void> {
  const token = await trx
    .insertInto('email_tokens')
    .values({
      tenant_id: t.tenantId,
      user_id: t.userId,
      purpose: t.purpose,
      token_hash: t.tokenHash,
      email: t.email,
      user_version: t.userVersion,
      expires_at: t.expiresAt,
      created_at: t.now,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  await insertMail(trx, {
    outboxId: t.outboxId,
    tenantId: t.tenantId,
    tokenId: token.id,
    recipient: t.email,
    messageEnc: t.messageEnc,
    expiresAt: t.expiresAt,
    now: t.now,
  })
}

/** A used token: whom and what it was for, the address it went to, the user's security_version then. */
export interface UsedToken {
  userId: string
  email: string
  purpose: TokenPurpose
  userVersion: number
}

/**
 * Uses a token: marks it used if it is of this tenant and one of `purposes`, unused and unexpired, and
 * returns it. One conditional UPDATE: of concurrent uses exactly one gets the row.
 */
export async function consumeToken(
  trx: Transaction<Database>,
  tenantId: string,
  tokenHash: string,
  purposes: readonly TokenPurpose[],
  now: Date,
): Promise<UsedToken | undefined> {
  const row = await trx
    .updateTable('email_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('tenant_id', '=', tenantId)
    .where('purpose', 'in', purposes)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['user_id', 'email', 'purpose', 'user_version'])
    .executeTakeFirst()
  return row
    ? { userId: row.user_id, email: row.email, purpose: row.purpose, userVersion: row.user_version }
    : undefined
}

/** A due outbox row a sender has leased. */
export interface ClaimedMail {
  id: string
  tenantId: string
  recipient: string
  messageEnc: string | null
  attempts: number
  expiresAt: Date
}

/**
 * Leases up to `limit` due rows until `leaseUntil`. FOR UPDATE SKIP LOCKED: two senders on one
 * PostgreSQL never take the same row; a row whose lease ran out (its sender died) is due again.
 */
export async function claimDue(db: Db, now: Date, leaseUntil: Date, limit: number): Promise<ClaimedMail[]> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('mail_outbox')
      .select(['id', 'tenant_id', 'recipient', 'message_enc', 'attempts', 'expires_at'])
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      .orderBy('next_attempt_at')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .execute()
    if (rows.length === 0) return []
    await trx
      .updateTable('mail_outbox')
      .set({ locked_until: leaseUntil })
      .where(
        'id',
        'in',
        rows.map((r) => r.id),
      )
      .execute()
    return rows.map((r) => ({
      id: r.id,
      tenantId: r.tenant_id,
      recipient: r.recipient,
      messageEnc: r.message_enc,
      attempts: r.attempts,
      expiresAt: r.expires_at,
    }))
  })
}

/** Settles a leased row: sent, failed or expired (the message is cleared), or back to pending for a retry. */
export async function settleMail(
  db: Db,
  id: string,
  leaseUntil: Date,
  s: { status: OutboxStatus; attempts: number; now: Date; nextAttemptAt?: Date; error?: string },
): Promise<void> {
  const settled = s.status !== 'pending'
  await db
    .updateTable('mail_outbox')
    .set({
      status: s.status,
      attempts: s.attempts,
      locked_until: null,
      ...(settled ? { message_enc: null } : {}),
      ...(s.status === 'sent' ? { sent_at: s.now } : {}),
      ...(s.nextAttemptAt ? { next_attempt_at: s.nextAttemptAt } : {}),
      last_error: s.error ?? null,
    })
    .where('id', '=', id)
    // Why the lease in the condition: a sender whose lease ran out must not settle a row another took.
    .where('locked_until', '=', leaseUntil)
    .execute()
}

/** Pending rows and the age in seconds of the oldest (health, the pending gauge). */
export async function outboxBacklog(db: Db, now: Date): Promise<{ pending: number; oldestSeconds: number }> {
  const row = await db
    .selectFrom('mail_outbox')
    .select((eb) => [eb.fn.countAll<string>().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('status', '=', 'pending')
    .executeTakeFirst()
  const oldest = row?.oldest ? new Date(row.oldest).getTime() : null
  return {
    pending: Number(row?.n ?? 0),
    oldestSeconds: oldest === null ? 0 : Math.max(0, Math.floor((now.getTime() - oldest) / 1000)),
  }
}

/**
 * The sweeper's part (section 14): settled outbox rows a week old, and tokens used or expired a day
 * ago (the hourly cap counts tokens of the last hour, so a day is plenty).
 */
export async function sweepEmailTables(db: Db, now: Date): Promise<number> {
  const weekAgo = new Date(now.getTime() - 7 * 86_400_000)
  const dayAgo = new Date(now.getTime() - 86_400_000)
  const a = await db
    .deleteFrom('mail_outbox')
    .where('status', '<>', 'pending')
    .where('created_at', '<', weekAgo)
    .executeTakeFirst()
  const b = await db
    .deleteFrom('email_tokens')
    .where((eb) => eb.or([eb('used_at', '<', dayAgo), eb('expires_at', '<', dayAgo)]))
    .where('created_at', '<', dayAgo)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('mail_outbox')
            .select(sql.lit(1).as('x'))
            .whereRef('mail_outbox.token_id', '=', 'email_tokens.id')
            .where('mail_outbox.status', '=', 'pending'),
        ),
      ),
    )
    .executeTakeFirst()
  return Number(a.numDeletedRows) + Number(b.numDeletedRows)
}
