import { sql, type Kysely, type Migration } from 'kysely'
import { ACTIONS_0003, setActionCheck } from './0003_account_lifecycle.js'

// Second factor (openapi/paths/otp.yaml, docs/decisions.md D13): TOTP secrets, recovery codes, and the
// mfaTokens of logins waiting for their code; three audit action codes. Frozen once released.

const ACTIONS_0004 = sql`${ACTIONS_0003}, 'OTP_ENABLED', 'OTP_DISABLED', 'OTP_RECOVERY_CODES_RENEWED'`

export const secondFactor: Migration = {
  async up(db: Kysely<unknown>) {
    await setActionCheck(db, ACTIONS_0004)
    await sql`create table user_otp (
      user_id uuid primary key references users(id) on delete cascade,
      tenant_id uuid not null references tenants(id) on delete cascade,
      secret_enc text,
      confirmed_at timestamptz,
      pending_secret_enc text,
      pending_expires_at timestamptz,
      last_step bigint not null default 0
    )`.execute(db)
    await sql`create table otp_recovery_codes (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      code_hash text not null check (code_hash ~ '^[0-9a-f]{64}$'),
      used_at timestamptz,
      unique (user_id, code_hash)
    )`.execute(db)
    await sql`create table mfa_tokens (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      token_hash text not null unique check (token_hash ~ '^[0-9a-f]{64}$'),
      enrollment boolean not null,
      throttle_key text not null,
      failures integer not null default 0,
      expires_at timestamptz not null,
      created_at timestamptz not null default now()
    )`.execute(db)
    // Expired tokens are deleted by tenant whenever one is issued (no sweeper needed).
    await sql`create index mfa_tokens_tenant_expiry on mfa_tokens (tenant_id, expires_at)`.execute(db)
    await sql`create index mfa_tokens_user on mfa_tokens (user_id)`.execute(db)
  },

  async down(db: Kysely<unknown>) {
    await sql`drop table mfa_tokens`.execute(db)
    await sql`drop table otp_recovery_codes`.execute(db)
    await sql`drop table user_otp`.execute(db)
    await setActionCheck(db, ACTIONS_0003)
  },
}
