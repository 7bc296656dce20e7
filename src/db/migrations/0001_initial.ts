import { sql, type Kysely, type Migration } from 'kysely'

// Why raw SQL: partial and expression indexes, checks and the audit trigger are beyond the schema builder,
// and one readable script is easier to review than builder chains.
const BUILTIN_PERMISSIONS: [string, string][] = [
  ['users:read', 'Read users'],
  ['users:create', 'Create users'],
  ['users:update', 'Update users'],
  ['users:delete', 'Delete users'],
  ['roles:read', 'Read roles'],
  ['roles:create', 'Create roles'],
  ['roles:update', 'Update roles and their permissions'],
  ['roles:delete', 'Delete roles'],
  ['roles:assign', 'Assign roles to users'],
  ['roles:revoke', 'Remove roles from users'],
  ['permissions:read', 'Read permissions'],
  ['permissions:create', 'Create custom permissions'],
  ['permissions:update', 'Update custom permissions'],
  ['permissions:delete', 'Delete custom permissions'],
  ['permissions:grant', 'Grant permissions to users'],
  ['permissions:revoke', 'Revoke permissions from users'],
  ['tenants:read', 'Read tenants'],
  ['tenants:create', 'Create tenants'],
  ['tenants:update', 'Update tenants, their configuration and secrets'],
  ['tenants:delete', 'Delete tenants'],
  ['client-keys:read', 'Read Client Keys'],
  ['client-keys:create', 'Create Client Keys'],
  ['client-keys:update', 'Update and rotate Client Keys'],
  ['client-keys:revoke', 'Revoke Client Keys'],
  ['auth:logs', 'Read the audit log'],
  ['admin:*', 'Everything, in every tenant (platform tenant only)'],
]

const UP = `
create table service_settings (
  key text primary key,
  value text not null,
  updated_at timestamptz not null default now()
);

create table tenants (
  id uuid primary key default gen_random_uuid(),
  code text not null unique check (code ~ '^[a-z0-9][a-z0-9-]{1,62}[a-z0-9]$'),
  name text not null,
  status text not null default 'ACTIVE' check (status in ('ACTIVE', 'INACTIVE')),
  auth_config jsonb not null default '{}',
  metadata jsonb not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table tenant_secrets (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  kid text not null unique,
  secret_enc text not null,
  created_at timestamptz not null default now(),
  retired_at timestamptz,
  expires_at timestamptz
);
create index tenant_secrets_tenant on tenant_secrets (tenant_id);

create table tenant_databases (
  tenant_id uuid primary key references tenants(id) on delete cascade,
  url_enc text not null,
  host text not null,
  database_name text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table users (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null,
  email text,
  username text,
  cpf_cnpj text,
  password_hash text not null,
  status text not null default 'ACTIVE' check (status in ('ACTIVE', 'INACTIVE', 'SUSPENDED')),
  email_verified boolean not null default false,
  otp_enabled boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  last_login_at timestamptz
);
create unique index users_tenant_email on users (tenant_id, lower(email)) where email is not null;
create unique index users_tenant_username on users (tenant_id, lower(username)) where username is not null;
create unique index users_tenant_cpf_cnpj on users (tenant_id, cpf_cnpj) where cpf_cnpj is not null;
create index users_tenant_created on users (tenant_id, created_at desc);

create table roles (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null,
  name text not null,
  description text,
  level integer not null default 0 check (level between 0 and 1000),
  is_system boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (tenant_id, name)
);

create table permissions (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid,
  name text not null,
  resource text not null,
  action text not null,
  description text,
  is_system boolean not null default false,
  created_at timestamptz not null default now()
);
create unique index permissions_tenant_name on permissions (tenant_id, name) where tenant_id is not null;
create unique index permissions_builtin_name on permissions (name) where tenant_id is null;

create table role_permissions (
  tenant_id uuid not null,
  role_id uuid not null references roles(id) on delete cascade,
  permission_id uuid not null references permissions(id) on delete cascade,
  primary key (role_id, permission_id)
);
create index role_permissions_permission on role_permissions (permission_id);

create table user_roles (
  tenant_id uuid not null,
  user_id uuid not null references users(id) on delete cascade,
  role_id uuid not null references roles(id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (user_id, role_id)
);
create index user_roles_tenant_role on user_roles (tenant_id, role_id);

create table user_permissions (
  tenant_id uuid not null,
  user_id uuid not null references users(id) on delete cascade,
  permission_id uuid not null references permissions(id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (user_id, permission_id)
);
create index user_permissions_permission on user_permissions (permission_id);

create table sessions (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null,
  user_id uuid not null references users(id) on delete cascade,
  created_at timestamptz not null default now(),
  last_used_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz,
  revoked_reason text,
  ip text,
  user_agent text
);
create index sessions_active_by_user on sessions (tenant_id, user_id, created_at) where revoked_at is null;

create table refresh_tokens (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null,
  session_id uuid not null references sessions(id) on delete cascade,
  token_hash text not null unique,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz,
  rotated_at timestamptz,
  replaced_by uuid
);
create index refresh_tokens_session on refresh_tokens (session_id);

create table client_keys (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  name text not null,
  prefix text not null,
  key_hash text not null unique,
  previous_key_hash text unique,
  previous_key_expires_at timestamptz,
  scopes jsonb not null default '[]',
  ip_allowlist jsonb not null default '[]',
  origin_allowlist jsonb not null default '[]',
  status text not null default 'ACTIVE' check (status in ('ACTIVE', 'REVOKED', 'EXPIRED')),
  expires_at timestamptz,
  last_used_at timestamptz,
  created_by_type text,
  created_by_id uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index client_keys_tenant_created on client_keys (tenant_id, created_at desc);

create table client_key_usage (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null,
  key_id uuid not null,
  method text not null,
  route text not null,
  status_code integer not null,
  ip text,
  origin text,
  user_agent text,
  created_at timestamptz not null default now()
);
create index client_key_usage_key_time on client_key_usage (key_id, created_at desc);

create table audit_log (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null,
  user_id uuid,
  action text not null check (action in ('LOGIN', 'LOGOUT', 'REFRESH_TOKEN', 'REGISTER', 'USER_DELETE',
    'ROLE_ASSIGN', 'ROLE_REMOVE', 'PERMISSION_GRANT', 'PERMISSION_REVOKE')),
  success boolean not null,
  error_message text,
  ip_address text,
  user_agent text,
  actor_type text check (actor_type in ('user', 'client_key')),
  actor_id uuid,
  metadata jsonb not null default '{}',
  created_at timestamptz not null default now()
);
create index audit_log_tenant_time on audit_log (tenant_id, created_at desc);
create index audit_log_tenant_action_time on audit_log (tenant_id, action, created_at desc);
create index audit_log_tenant_ip_time on audit_log (tenant_id, ip_address, created_at desc);

create function audit_log_immutable() returns trigger language plpgsql as $fn$
begin
  -- Why the one escape: moving a tenant to its own database copies its rows there, then deletes them here.
  if tg_op = 'DELETE' and coalesce(current_setting('tessera.audit_relocation', true), '') = 'on' then
    return old;
  end if;
  raise exception 'audit_log rows are immutable (% refused)', tg_op using errcode = '42501';
end
$fn$;
create trigger audit_log_no_update before update on audit_log for each row execute function audit_log_immutable();
create trigger audit_log_no_delete before delete on audit_log for each row execute function audit_log_immutable();
create trigger audit_log_no_truncate before truncate on audit_log for each statement execute function audit_log_immutable();
`

/** Splits the script at statement ends, keeping the dollar-quoted function body whole. */
function statements(script: string): string[] {
  const out: string[] = []
  let current = ''
  let inDollar = false
  for (const line of script.split('\n')) {
    // An odd number of $fn$ markers on a line opens or closes the function body.
    if ((line.split('$fn$').length - 1) % 2 === 1) inDollar = !inDollar
    current += line + '\n'
    if (!inDollar && line.trimEnd().endsWith(';')) {
      out.push(current.trim())
      current = ''
    }
  }
  if (current.trim()) out.push(current.trim())
  return out
}

export const initial: Migration = {
  async up(db: Kysely<unknown>) {
    for (const stmt of statements(UP)) await sql.raw(stmt).execute(db)
    for (const [name, description] of BUILTIN_PERMISSIONS) {
      const [resource, action] = name.split(':')
      await sql`insert into permissions (tenant_id, name, resource, action, description, is_system)
        values (null, ${name}, ${resource}, ${action}, ${description}, true)`.execute(db)
    }
  },
  async down(db: Kysely<unknown>) {
    for (const t of [
      'audit_log',
      'client_key_usage',
      'client_keys',
      'refresh_tokens',
      'sessions',
      'user_permissions',
      'user_roles',
      'role_permissions',
      'permissions',
      'roles',
      'users',
      'tenant_databases',
      'tenant_secrets',
      'tenants',
      'service_settings',
    ]) {
      await sql.raw(`drop table if exists ${t} cascade`).execute(db)
    }
    await sql`drop function if exists audit_log_immutable()`.execute(db)
  },
}
