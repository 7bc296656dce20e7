import { sql, type Kysely, type Migration } from 'kysely'
import { asOwner, whoAmI } from './0002_audit_guard.js'

// The OpenID Connect provider (contract section 23, docs/decisions.md D28):
// - `oauth_clients`: a tenant's applications. The secret is stored as a SHA-256 hash (it has 256 random
//   bits, so a slow hash adds nothing), with the one it replaced while its grace lasts.
// - `oidc_payloads`: what `oidc-provider` stores (sessions, interactions, grants, codes, tokens), one row per
//   (tenant, model, id), with the columns it looks rows up by (`grant_id`, `uid`, `user_code`) and the
//   instants it expires and is consumed. Retention sweeps expired rows.
// - `tenant_signing_keys.purpose`: `access` (the access tokens' EdDSA or ES256 pair, as before) or `oidc`
//   (the RS256 pair that signs ID tokens and JWT access tokens).
// - The four `oauth-clients:*` built-in permissions (the built-in admin role holds every built-in one).
// - The audit actions of section 23.
// - `sessions.login_method`: how a session was signed in, for the ID token's `amr`.
// Frozen once released: the action list is spelled out.

const ACTIONS_0015 = sql`'LOGIN', 'LOGOUT', 'REFRESH_TOKEN', 'REGISTER', 'USER_DELETE', 'ROLE_ASSIGN',
  'ROLE_REMOVE', 'PERMISSION_GRANT', 'PERMISSION_REVOKE', 'PASSWORD_CHANGED', 'PASSWORD_RESET',
  'SESSIONS_REVOKED', 'ACCOUNT_LOCKED', 'ACCOUNT_UNLOCKED', 'OTP_ENABLED', 'OTP_DISABLED',
  'OTP_RECOVERY_CODES_RENEWED', 'PASSWORD_RESET_REQUESTED', 'EMAIL_VERIFICATION_SENT', 'EMAIL_VERIFIED',
  'PASSKEY_ADDED', 'PASSKEY_REMOVED', 'EMAIL_CHANGE_REQUESTED', 'EMAIL_CHANGED',
  'ROLE_CREATE', 'ROLE_UPDATE', 'ROLE_DELETE', 'PERMISSION_CREATE', 'PERMISSION_UPDATE', 'PERMISSION_DELETE',
  'USER_UPDATE', 'TENANT_CREATE', 'TENANT_UPDATE', 'TENANT_DELETE', 'TENANT_CONFIG_UPDATE',
  'TENANT_DATABASE_ROUTE', 'CLIENT_KEY_CREATE', 'CLIENT_KEY_UPDATE', 'CLIENT_KEY_ROTATE', 'CLIENT_KEY_REVOKE',
  'PUBLISHABLE_KEY_CREATE', 'PUBLISHABLE_KEY_UPDATE', 'PUBLISHABLE_KEY_REVOKE'`
export const ACTIONS_0016 = sql`${ACTIONS_0015}, 'OAUTH_CONSENT', 'OAUTH_TOKEN', 'OAUTH_CLIENT_CREATE',
  'OAUTH_CLIENT_UPDATE', 'OAUTH_CLIENT_DELETE'`

/** Replaces the action check of tessera_audit.audit_log, as its owner (later migrations call it too). */
export async function setActionCheck(db: Kysely<unknown>, actions: typeof ACTIONS_0015): Promise<void> {
  const who = await whoAmI(db)
  await asOwner(db, who, async () => {
    if (!who.superuser) await sql`set local role tessera_audit_owner`.execute(db)
    await sql`alter table tessera_audit.audit_log drop constraint audit_log_action_check`.execute(db)
    await sql`alter table tessera_audit.audit_log add constraint audit_log_action_check
      check (action in (${actions}))`.execute(db)
    if (!who.superuser) await sql`reset role`.execute(db)
  })
}

const PERMISSIONS = [
  ['oauth-clients:read', 'Read OAuth applications'],
  ['oauth-clients:create', 'Register OAuth applications'],
  ['oauth-clients:update', 'Update OAuth applications and rotate their secrets'],
  ['oauth-clients:delete', 'Delete OAuth applications'],
] as const

export const oidcProvider: Migration = {
  async up(db: Kysely<unknown>) {
    await setActionCheck(db, ACTIONS_0016)
    for (const [name, description] of PERMISSIONS) {
      const [resource, action] = name.split(':')
      await sql`insert into permissions (tenant_id, name, resource, action, description, is_system)
        values (null, ${name}, ${resource}, ${action}, ${description}, true)`.execute(db)
    }
    await sql`create table oauth_clients (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      client_id text not null unique check (client_id ~ '^[A-Za-z0-9_-]{16,64}$'),
      name text not null,
      type text not null check (type in ('confidential', 'public')),
      token_endpoint_auth_method text not null
        check (token_endpoint_auth_method in ('client_secret_basic', 'client_secret_post', 'none')),
      redirect_uris jsonb not null check (jsonb_typeof(redirect_uris) = 'array'),
      post_logout_redirect_uris jsonb not null default '[]'::jsonb
        check (jsonb_typeof(post_logout_redirect_uris) = 'array'),
      grant_types jsonb not null check (jsonb_typeof(grant_types) = 'array'),
      scopes jsonb not null check (jsonb_typeof(scopes) = 'array'),
      first_party boolean not null default false,
      dynamic boolean not null default false,
      backchannel_logout_uri text,
      logo_uri text,
      client_uri text,
      secret_hash text check (secret_hash ~ '^[0-9a-f]{64}$'),
      previous_secret_hash text check (previous_secret_hash ~ '^[0-9a-f]{64}$'),
      previous_secret_expires_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      check ((type = 'public') = (secret_hash is null))
    )`.execute(db)
    await sql`create index oauth_clients_tenant_created on oauth_clients (tenant_id, created_at)`.execute(db)
    await sql`create table oidc_payloads (
      tenant_id uuid not null references tenants(id) on delete cascade,
      model text not null,
      id text not null,
      payload jsonb not null,
      grant_id text,
      uid text,
      user_code text,
      account_id uuid,
      expires_at timestamptz,
      consumed_at timestamptz,
      primary key (tenant_id, model, id)
    )`.execute(db)
    await sql`create index oidc_payloads_grant on oidc_payloads (tenant_id, grant_id) where grant_id is not null`.execute(
      db,
    )
    await sql`create index oidc_payloads_uid on oidc_payloads (tenant_id, uid) where uid is not null`.execute(
      db,
    )
    await sql`create index oidc_payloads_user_code on oidc_payloads (tenant_id, user_code)
      where user_code is not null`.execute(db)
    await sql`create index oidc_payloads_account on oidc_payloads (tenant_id, account_id, model)
      where account_id is not null`.execute(db)
    // The queue of back-channel logout tokens owed (payload-queries.ts), claimed every second.
    await sql`create index oidc_payloads_logout on oidc_payloads (tenant_id) where model = 'TesseraLogout'`.execute(
      db,
    )
    await sql`create index oidc_payloads_expires on oidc_payloads (expires_at) where expires_at is not null`.execute(
      db,
    )
    await sql`alter table tenant_signing_keys add column purpose text not null default 'access'
      check (purpose in ('access', 'oidc'))`.execute(db)
    // One current key per purpose (the access tokens' pair and the provider's RS256 pair live side by side).
    await sql`drop index tenant_signing_keys_current`.execute(db)
    await sql`create unique index tenant_signing_keys_current on tenant_signing_keys (tenant_id, purpose)
      where retired_at is null`.execute(db)
    await sql`alter table tenant_signing_keys drop constraint if exists tenant_signing_keys_algorithm_check`.execute(
      db,
    )
    await sql`alter table tenant_signing_keys add constraint tenant_signing_keys_algorithm_check
      check (algorithm in ('EdDSA', 'ES256', 'RS256'))`.execute(db)
    // How a session was signed in (RFC 8176's `amr` of the provider's ID tokens): pwd, otp or passkey.
    await sql`alter table sessions add column login_method text
      check (login_method in ('pwd', 'otp', 'passkey'))`.execute(db)
  },
  async down(db: Kysely<unknown>) {
    await sql`alter table sessions drop column login_method`.execute(db)
    await sql`delete from tenant_signing_keys where purpose = 'oidc'`.execute(db)
    await sql`alter table tenant_signing_keys drop constraint tenant_signing_keys_algorithm_check`.execute(db)
    await sql`alter table tenant_signing_keys add constraint tenant_signing_keys_algorithm_check
      check (algorithm in ('EdDSA', 'ES256'))`.execute(db)
    await sql`drop index tenant_signing_keys_current`.execute(db)
    await sql`alter table tenant_signing_keys drop column purpose`.execute(db)
    await sql`create unique index tenant_signing_keys_current on tenant_signing_keys (tenant_id)
      where retired_at is null`.execute(db)
    await sql`drop table oidc_payloads`.execute(db)
    await sql`drop table oauth_clients`.execute(db)
    await sql`delete from permissions where tenant_id is null and name like 'oauth-clients:%'`.execute(db)
    await setActionCheck(db, ACTIONS_0015)
  },
}
