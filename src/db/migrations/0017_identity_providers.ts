import { sql, type Kysely, type Migration } from 'kysely'
import { ACTIONS_0016, setActionCheck } from './0016_oidc_provider.js'

// Sign-in with other identity providers (contract section 24):
// - `identity_providers`: a tenant's providers. The client secret is sealed with the service's secrets key
//   (lib/crypto-box.ts, bound to the provider's id), as tenant secrets are; it is never answered.
// - `user_identities`: who a provider's person is here, keyed by (tenant, provider, subject) and never by email.
//   Deleting a provider deletes its links.
// - The four `identity-providers:*` built-in permissions, and the audit actions of section 24.
// Frozen once released: the action list is spelled out.

const ACTIONS_0017 = sql`${ACTIONS_0016}, 'IDENTITY_PROVIDER_CREATE', 'IDENTITY_PROVIDER_UPDATE',
  'IDENTITY_PROVIDER_DELETE', 'IDENTITY_LINKED', 'IDENTITY_UNLINKED'`

const PERMISSIONS = [
  ['identity-providers:read', 'Read identity providers'],
  ['identity-providers:create', 'Add identity providers'],
  ['identity-providers:update', 'Update identity providers'],
  ['identity-providers:delete', 'Delete identity providers'],
] as const

export const identityProviders: Migration = {
  async up(db: Kysely<unknown>) {
    await setActionCheck(db, ACTIONS_0017)
    for (const [name, description] of PERMISSIONS) {
      const [resource, action] = name.split(':')
      await sql`insert into permissions (tenant_id, name, resource, action, description, is_system)
        values (null, ${name}, ${resource}, ${action}, ${description}, true)`.execute(db)
    }
    await sql`create table identity_providers (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      name text not null,
      kind text not null check (kind in ('oidc', 'oauth2')),
      preset text check (preset in ('google', 'microsoft', 'github')),
      issuer text,
      authorization_endpoint text not null,
      token_endpoint text not null,
      userinfo_endpoint text,
      jwks_uri text,
      client_id text not null,
      client_secret_enc text not null,
      token_endpoint_auth_method text not null
        check (token_endpoint_auth_method in ('client_secret_basic', 'client_secret_post')),
      scopes jsonb not null check (jsonb_typeof(scopes) = 'array'),
      claim_mapping jsonb not null check (jsonb_typeof(claim_mapping) = 'object'),
      allow_signup boolean not null default false,
      trust_email boolean not null default false,
      linking text not null default 'never' check (linking in ('never', 'verified_email')),
      allowed_domains jsonb not null default '[]'::jsonb check (jsonb_typeof(allowed_domains) = 'array'),
      default_roles jsonb not null default '[]'::jsonb check (jsonb_typeof(default_roles) = 'array'),
      show_on_login boolean not null default true,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      check ((kind = 'oidc') = (issuer is not null and jwks_uri is not null)),
      check (kind = 'oidc' or userinfo_endpoint is not null)
    )`.execute(db)
    await sql`create index identity_providers_tenant_created on identity_providers (tenant_id, created_at)`.execute(
      db,
    )
    await sql`create table user_identities (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      provider_id uuid not null references identity_providers(id) on delete cascade,
      subject text not null check (length(subject) between 1 and 255),
      email text,
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      unique (tenant_id, provider_id, subject)
    )`.execute(db)
    await sql`create index user_identities_user on user_identities (tenant_id, user_id, created_at)`.execute(
      db,
    )
  },
  async down(db: Kysely<unknown>) {
    await sql`drop table user_identities`.execute(db)
    await sql`drop table identity_providers`.execute(db)
    await sql`delete from permissions where tenant_id is null and name like 'identity-providers:%'`.execute(
      db,
    )
    await setActionCheck(db, ACTIONS_0016)
  },
}
