import { sql, type Kysely, type Migration } from 'kysely'

// The browser's part of a federated sign-in (contract section 24):
// - `federation_flows`: one row per authorize step, found by the SHA-256 of its `state`, bound to its browser by
//   the SHA-256 of its cookie, used once (deleted by the callback), dead after `expires_at` (10 minutes). The
//   service's PKCE verifier is sealed (lib/crypto-box.ts); the nonce is not a secret.
// - `federation_codes`: the login code a callback returns in the fragment, stored as its SHA-256, bound to the
//   page's `code_challenge`, used once (deleted by POST /login/federated), dead after 60 seconds.
// - `sessions.login_method` gains `fed`, the ID token's `amr` of section 23 for a federated sign-in.

export const federationFlows: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create table federation_flows (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      provider_id uuid not null references identity_providers(id) on delete cascade,
      state_hash text not null unique check (state_hash ~ '^[0-9a-f]{64}$'),
      binding_hash text not null check (binding_hash ~ '^[0-9a-f]{64}$'),
      nonce text not null,
      verifier_enc text not null,
      return_to text not null,
      code_challenge text not null check (code_challenge ~ '^[A-Za-z0-9_-]{43}$'),
      intent text not null default 'login' check (intent in ('login', 'link')),
      link_user_id uuid references users(id) on delete cascade,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null
    )`.execute(db)
    await sql`create index federation_flows_expires on federation_flows (expires_at)`.execute(db)
    await sql`create table federation_codes (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      provider_id uuid not null references identity_providers(id) on delete cascade,
      code_hash text not null unique check (code_hash ~ '^[0-9a-f]{64}$'),
      code_challenge text not null check (code_challenge ~ '^[A-Za-z0-9_-]{43}$'),
      created_at timestamptz not null default now(),
      expires_at timestamptz not null
    )`.execute(db)
    await sql`create index federation_codes_expires on federation_codes (expires_at)`.execute(db)
    await sql`alter table sessions drop constraint sessions_login_method_check`.execute(db)
    await sql`alter table sessions add constraint sessions_login_method_check
      check (login_method in ('pwd', 'otp', 'passkey', 'fed'))`.execute(db)
  },
  async down(db: Kysely<unknown>) {
    await sql`update sessions set login_method = null where login_method = 'fed'`.execute(db)
    await sql`alter table sessions drop constraint sessions_login_method_check`.execute(db)
    await sql`alter table sessions add constraint sessions_login_method_check
      check (login_method in ('pwd', 'otp', 'passkey'))`.execute(db)
    await sql`drop table federation_codes`.execute(db)
    await sql`drop table federation_flows`.execute(db)
  },
}
