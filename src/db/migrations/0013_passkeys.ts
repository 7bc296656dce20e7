import { sql, type Kysely, type Migration } from 'kysely'
import { asOwner, whoAmI } from './0002_audit_guard.js'

// Passkeys (contract section 21, docs/decisions.md D25): one row per WebAuthn credential, and the
// single-use challenges of registrations and logins (5 minutes, swept by retention). Both owned by
// src/modules/passkeys. Two audit action codes. Frozen once released: the action list is spelled out.
// Why 0013 and nothing of 0012: the two were written side by side; this one reads no table of 0012.

const ACTIONS_0011 = sql`'LOGIN', 'LOGOUT', 'REFRESH_TOKEN', 'REGISTER', 'USER_DELETE', 'ROLE_ASSIGN',
  'ROLE_REMOVE', 'PERMISSION_GRANT', 'PERMISSION_REVOKE', 'PASSWORD_CHANGED', 'PASSWORD_RESET',
  'SESSIONS_REVOKED', 'ACCOUNT_LOCKED', 'ACCOUNT_UNLOCKED', 'OTP_ENABLED', 'OTP_DISABLED',
  'OTP_RECOVERY_CODES_RENEWED', 'PASSWORD_RESET_REQUESTED', 'EMAIL_VERIFICATION_SENT', 'EMAIL_VERIFIED'`
const ACTIONS_0013 = sql`${ACTIONS_0011}, 'PASSKEY_ADDED', 'PASSKEY_REMOVED'`

/** Replaces the action check of tessera_audit.audit_log (0008 moved it there), as its owner. */
async function setActionCheck(db: Kysely<unknown>, actions: typeof ACTIONS_0011): Promise<void> {
  const who = await whoAmI(db)
  await asOwner(db, who, async () => {
    if (!who.superuser) await sql`set local role tessera_audit_owner`.execute(db)
    await sql`alter table tessera_audit.audit_log drop constraint audit_log_action_check`.execute(db)
    await sql`alter table tessera_audit.audit_log add constraint audit_log_action_check
      check (action in (${actions}))`.execute(db)
    if (!who.superuser) await sql`reset role`.execute(db)
  })
}

export const passkeys: Migration = {
  async up(db: Kysely<unknown>) {
    await setActionCheck(db, ACTIONS_0013)
    // `credential_id` is the authenticator's id (base64url), unique within a tenant: a login finds its user
    // by it alone. `public_key` is the COSE key as registered (base64url); `counter` the last signature counter seen.
    await sql`create table passkeys (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      credential_id text not null check (credential_id ~ '^[A-Za-z0-9_-]+$' and length(credential_id) <= 1366),
      public_key text not null,
      counter bigint not null default 0,
      transports text[] not null default '{}',
      device_type text not null check (device_type in ('singleDevice', 'multiDevice')),
      backed_up boolean not null,
      name text not null,
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      unique (tenant_id, credential_id)
    )`.execute(db)
    await sql`create index passkeys_user on passkeys (tenant_id, user_id, created_at)`.execute(db)
    // A challenge is stored as its SHA-256: used once (deleted when presented), bound to a user for a
    // registration (`user_id`), and dead after `expires_at`.
    await sql`create table passkey_challenges (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      user_id uuid references users(id) on delete cascade,
      purpose text not null check (purpose in ('register', 'login')),
      challenge_hash text not null unique check (challenge_hash ~ '^[0-9a-f]{64}$'),
      expires_at timestamptz not null,
      created_at timestamptz not null default now(),
      check ((purpose = 'register') = (user_id is not null))
    )`.execute(db)
    await sql`create index passkey_challenges_expiry on passkey_challenges (expires_at)`.execute(db)
  },

  async down(db: Kysely<unknown>) {
    await sql`drop table passkey_challenges`.execute(db)
    await sql`drop table passkeys`.execute(db)
    await setActionCheck(db, ACTIONS_0011)
  },
}
