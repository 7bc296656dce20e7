import { sql, type Kysely, type Migration } from 'kysely'
import { asOwner, whoAmI } from './0002_audit_guard.js'

// Email (contract section 18, docs/decisions.md D22): single-use tokens stored as SHA-256, and the
// transactional outbox a token's mail waits in until the sender delivers it. Both owned by
// src/modules/email. Three audit action codes. Frozen once released: the action list is spelled out.

const ACTIONS_0004 = sql`'LOGIN', 'LOGOUT', 'REFRESH_TOKEN', 'REGISTER', 'USER_DELETE', 'ROLE_ASSIGN',
  'ROLE_REMOVE', 'PERMISSION_GRANT', 'PERMISSION_REVOKE', 'PASSWORD_CHANGED', 'PASSWORD_RESET',
  'SESSIONS_REVOKED', 'ACCOUNT_LOCKED', 'ACCOUNT_UNLOCKED', 'OTP_ENABLED', 'OTP_DISABLED',
  'OTP_RECOVERY_CODES_RENEWED'`
const ACTIONS_0011 = sql`${ACTIONS_0004}, 'PASSWORD_RESET_REQUESTED', 'EMAIL_VERIFICATION_SENT', 'EMAIL_VERIFIED'`

/** Replaces the action check of tessera_audit.audit_log (0008 moved it there), as its owner. */
async function setActionCheck(db: Kysely<unknown>, actions: typeof ACTIONS_0004): Promise<void> {
  const who = await whoAmI(db)
  await asOwner(db, who, async () => {
    if (!who.superuser) await sql`set local role tessera_audit_owner`.execute(db)
    await sql`alter table tessera_audit.audit_log drop constraint audit_log_action_check`.execute(db)
    await sql`alter table tessera_audit.audit_log add constraint audit_log_action_check
      check (action in (${actions}))`.execute(db)
    if (!who.superuser) await sql`reset role`.execute(db)
  })
}

export const email: Migration = {
  async up(db: Kysely<unknown>) {
    await setActionCheck(db, ACTIONS_0011)
    // `email` is the address the token was sent to: a verification token is void once it changes.
    // `used_at` is set on use, and on the earlier reset tokens a new request voids.
    await sql`create table email_tokens (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      purpose text not null check (purpose in ('reset', 'verify')),
      token_hash text not null unique check (token_hash ~ '^[0-9a-f]{64}$'),
      email text not null,
      expires_at timestamptz not null,
      used_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db)
    // The hourly cap counts a user's tokens of one purpose made in the last hour.
    await sql`create index email_tokens_user on email_tokens (user_id, purpose, created_at)`.execute(db)
    await sql`create index email_tokens_expiry on email_tokens (expires_at)`.execute(db)
    // One message per row. `message_enc` holds the rendered message (it carries the token's link),
    // encrypted with SECRETS_KEY, and is cleared once the row is settled (sent, failed or expired).
    // `locked_until` is a sender's lease: a sender that dies mid-send leaves the row to the next one.
    await sql`create table mail_outbox (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      token_id uuid references email_tokens(id) on delete set null,
      recipient text not null,
      message_enc text,
      status text not null default 'pending' check (status in ('pending', 'sent', 'failed', 'expired')),
      attempts integer not null default 0,
      next_attempt_at timestamptz not null default now(),
      locked_until timestamptz,
      last_error text,
      expires_at timestamptz not null,
      sent_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db)
    await sql`create index mail_outbox_due on mail_outbox (next_attempt_at) where status = 'pending'`.execute(
      db,
    )
    await sql`create index mail_outbox_settled on mail_outbox (created_at) where status <> 'pending'`.execute(
      db,
    )
  },

  async down(db: Kysely<unknown>) {
    await sql`drop table mail_outbox`.execute(db)
    await sql`drop table email_tokens`.execute(db)
    await setActionCheck(db, ACTIONS_0004)
  },
}
