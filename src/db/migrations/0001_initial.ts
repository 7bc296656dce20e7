import { sql, type ColumnDefinitionBuilder, type Kysely, type Migration } from 'kysely'

// A migration is frozen once released: it spells out its own literals (status lists, the permission
// catalogue) instead of importing them from code that may change later.

/** The built-in permission catalogue (listPermissions), shared by every tenant (tenant_id null). */
const BUILTIN_PERMISSIONS: readonly (readonly [string, string])[] = [
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
  ['tenants:update', 'Update tenants, their configuration and signing secrets'],
  ['tenants:delete', 'Delete tenants'],
  ['client-keys:read', 'Read Client Keys and their usage'],
  ['client-keys:create', 'Create Client Keys'],
  ['client-keys:update', 'Update and rotate Client Keys'],
  ['client-keys:revoke', 'Revoke Client Keys'],
  ['auth:logs', 'Read the audit log'],
  ['admin:*', 'Everything, in every tenant (platform tenant only)'],
]

const TABLES_IN_DROP_ORDER = [
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
]

type Col = ColumnDefinitionBuilder

const uuidPk = (c: Col) => c.primaryKey().defaultTo(sql`gen_random_uuid()`)
const now = (c: Col) => c.notNull().defaultTo(sql`now()`)
const emptyObject = (c: Col) => c.notNull().defaultTo(sql`'{}'::jsonb`)
const emptyArray = (c: Col) => c.notNull().defaultTo(sql`'[]'::jsonb`)
const tenantFk = (c: Col) => c.notNull().references('tenants.id').onDelete('cascade')
const index = (db: Kysely<unknown>, name: string, table: string, columns: string[]) =>
  db.schema.createIndex(name).on(table).columns(columns).execute()

async function createTenantTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('service_settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', now)
    .execute()

  await db.schema
    .createTable('tenants')
    .addColumn('id', 'uuid', uuidPk)
    .addColumn('code', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('ACTIVE'))
    .addColumn('auth_config', 'jsonb', emptyObject)
    .addColumn('metadata', 'jsonb', emptyObject)
    .addColumn('created_at', 'timestamptz', now)
    .addColumn('updated_at', 'timestamptz', now)
    .addCheckConstraint('tenants_code_format', sql`code ~ '^[a-z0-9][a-z0-9-]{1,62}[a-z0-9]$'`)
    .addCheckConstraint('tenants_status_check', sql`status in ('ACTIVE', 'INACTIVE')`)
    .addCheckConstraint('tenants_auth_config_object', sql`jsonb_typeof(auth_config) = 'object'`)
    .addCheckConstraint('tenants_metadata_object', sql`jsonb_typeof(metadata) = 'object'`)
    .execute()

  await db.schema
    .createTable('tenant_secrets')
    .addColumn('id', 'uuid', uuidPk)
    .addColumn('tenant_id', 'uuid', tenantFk)
    .addColumn('kid', 'text', (c) => c.notNull().unique())
    .addColumn('secret_enc', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', now)
    .addColumn('retired_at', 'timestamptz')
    .addColumn('expires_at', 'timestamptz')
    .execute()
  await index(db, 'tenant_secrets_tenant', 'tenant_secrets', ['tenant_id', 'created_at desc'])
  // Why unique: two current secrets would make the signing key ambiguous; retire the old row first.
  await sql`create unique index tenant_secrets_current on tenant_secrets (tenant_id) where retired_at is null`.execute(
    db,
  )

  await db.schema
    .createTable('tenant_databases')
    .addColumn('tenant_id', 'uuid', (c) => c.primaryKey().references('tenants.id').onDelete('cascade'))
    .addColumn('url_enc', 'text', (c) => c.notNull())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('database_name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', now)
    .addColumn('updated_at', 'timestamptz', now)
    .execute()
}

async function createPrincipalTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'uuid', uuidPk)
    .addColumn('tenant_id', 'uuid', tenantFk)
    .addColumn('email', 'text')
    .addColumn('username', 'text')
    .addColumn('cpf_cnpj', 'text')
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('ACTIVE'))
    .addColumn('email_verified', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('otp_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', now)
    .addColumn('updated_at', 'timestamptz', now)
    .addColumn('last_login_at', 'timestamptz')
    .addCheckConstraint('users_status_check', sql`status in ('ACTIVE', 'INACTIVE', 'SUSPENDED')`)
    .addCheckConstraint('users_cpf_cnpj_digits', sql`cpf_cnpj ~ '^([0-9]{11}|[0-9]{14})$'`)
    // Why: a user without any identifier could never log in again.
    .addCheckConstraint(
      'users_identifier_present',
      sql`email is not null or username is not null or cpf_cnpj is not null`,
    )
    .execute()
  // Identifiers compare case-insensitively within a tenant; the same email may exist in two tenants.
  await sql`create unique index users_tenant_email on users (tenant_id, lower(email)) where email is not null`.execute(
    db,
  )
  await sql`create unique index users_tenant_username on users (tenant_id, lower(username))
    where username is not null`.execute(db)
  await sql`create unique index users_tenant_cpf_cnpj on users (tenant_id, cpf_cnpj)
    where cpf_cnpj is not null`.execute(db)
  await index(db, 'users_tenant_created', 'users', ['tenant_id', 'created_at desc'])

  await db.schema
    .createTable('roles')
    .addColumn('id', 'uuid', uuidPk)
    .addColumn('tenant_id', 'uuid', tenantFk)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('level', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_system', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', now)
    .addColumn('updated_at', 'timestamptz', now)
    .addUniqueConstraint('roles_tenant_name_key', ['tenant_id', 'name'])
    .addCheckConstraint('roles_level_range', sql`level between 0 and 1000`)
    .execute()

  await db.schema
    .createTable('permissions')
    .addColumn('id', 'uuid', uuidPk)
    .addColumn('tenant_id', 'uuid', (c) => c.references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('is_system', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', now)
    .addCheckConstraint('permissions_name_format', sql`name ~ '^[a-z][a-z0-9-]*:([a-z][a-z0-9-]*|\\*)$'`)
    .addCheckConstraint('permissions_name_parts', sql`name = resource || ':' || action`)
    .execute()
  await sql`create unique index permissions_tenant_name on permissions (tenant_id, name)
    where tenant_id is not null`.execute(db)
  await sql`create unique index permissions_builtin_name on permissions (name) where tenant_id is null`.execute(
    db,
  )
}

async function createGrantTables(db: Kysely<unknown>): Promise<void> {
  // tenant_id here carries no foreign key: the parent rows cascade, and it keeps tenant-scoped queries simple.
  await db.schema
    .createTable('role_permissions')
    .addColumn('tenant_id', 'uuid', (c) => c.notNull())
    .addColumn('role_id', 'uuid', (c) => c.notNull().references('roles.id').onDelete('cascade'))
    .addColumn('permission_id', 'uuid', (c) => c.notNull().references('permissions.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('role_permissions_pkey', ['role_id', 'permission_id'])
    .execute()
  // Why: deleting a permission cascades here; without it each delete scans the table.
  await index(db, 'role_permissions_permission', 'role_permissions', ['permission_id'])

  await db.schema
    .createTable('user_roles')
    .addColumn('tenant_id', 'uuid', (c) => c.notNull())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role_id', 'uuid', (c) => c.notNull().references('roles.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', now)
    .addPrimaryKeyConstraint('user_roles_pkey', ['user_id', 'role_id'])
    .execute()
  await index(db, 'user_roles_tenant_role', 'user_roles', ['tenant_id', 'role_id'])
  // Why: the cascade from roles filters on role_id alone, which the (tenant_id, role_id) index cannot serve.
  await index(db, 'user_roles_role', 'user_roles', ['role_id'])

  await db.schema
    .createTable('user_permissions')
    .addColumn('tenant_id', 'uuid', (c) => c.notNull())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('permission_id', 'uuid', (c) => c.notNull().references('permissions.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', now)
    .addPrimaryKeyConstraint('user_permissions_pkey', ['user_id', 'permission_id'])
    .execute()
  await index(db, 'user_permissions_permission', 'user_permissions', ['permission_id'])
}

async function createSessionTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'uuid', uuidPk)
    .addColumn('tenant_id', 'uuid', tenantFk)
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', now)
    .addColumn('last_used_at', 'timestamptz', now)
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('revoked_reason', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .execute()
  // The session limit counts and revokes a user's active sessions oldest first.
  await sql`create index sessions_active_by_user on sessions (tenant_id, user_id, created_at)
    where revoked_at is null`.execute(db)
  await index(db, 'sessions_user', 'sessions', ['user_id'])

  await db.schema
    .createTable('refresh_tokens')
    .addColumn('id', 'uuid', uuidPk)
    .addColumn('tenant_id', 'uuid', (c) => c.notNull())
    .addColumn('session_id', 'uuid', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', now)
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('rotated_at', 'timestamptz')
    .addColumn('replaced_by', 'uuid')
    .addCheckConstraint('refresh_tokens_hash_format', sql`token_hash ~ '^[0-9a-f]{64}$'`)
    .execute()
  await index(db, 'refresh_tokens_session', 'refresh_tokens', ['session_id'])
}

async function createClientKeyTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('client_keys')
    .addColumn('id', 'uuid', uuidPk)
    .addColumn('tenant_id', 'uuid', tenantFk)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('previous_key_hash', 'text', (c) => c.unique())
    .addColumn('previous_key_expires_at', 'timestamptz')
    .addColumn('scopes', 'jsonb', emptyArray)
    .addColumn('ip_allowlist', 'jsonb', emptyArray)
    .addColumn('origin_allowlist', 'jsonb', emptyArray)
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('ACTIVE'))
    .addColumn('expires_at', 'timestamptz')
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('created_by_type', 'text')
    .addColumn('created_by_id', 'uuid')
    .addColumn('created_at', 'timestamptz', now)
    .addColumn('updated_at', 'timestamptz', now)
    .addColumn('revoked_at', 'timestamptz')
    .addCheckConstraint('client_keys_status_check', sql`status in ('ACTIVE', 'REVOKED', 'EXPIRED')`)
    .addCheckConstraint('client_keys_created_by_type_check', sql`created_by_type in ('user', 'client_key')`)
    .addCheckConstraint(
      'client_keys_lists_are_arrays',
      sql`jsonb_typeof(scopes) = 'array' and jsonb_typeof(ip_allowlist) = 'array'
        and jsonb_typeof(origin_allowlist) = 'array'`,
    )
    .execute()
  await index(db, 'client_keys_tenant_created', 'client_keys', ['tenant_id', 'created_at'])

  // No foreign key on key_id: buffered usage rows are flushed after the request, maybe after a key delete.
  await db.schema
    .createTable('client_key_usage')
    .addColumn('id', 'uuid', uuidPk)
    .addColumn('tenant_id', 'uuid', (c) => c.notNull())
    .addColumn('key_id', 'uuid', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('route', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('origin', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('created_at', 'timestamptz', now)
    .execute()
  await index(db, 'client_key_usage_key_time', 'client_key_usage', ['key_id', 'created_at desc'])
  // Why: nothing cascades here, so tenant deletion and relocation find a tenant's rows through this.
  await index(db, 'client_key_usage_tenant_time', 'client_key_usage', ['tenant_id', 'created_at'])
}

async function createAuditLog(db: Kysely<unknown>): Promise<void> {
  // No foreign key on tenant_id: audit rows outlive their tenant.
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'uuid', uuidPk)
    .addColumn('tenant_id', 'uuid', (c) => c.notNull())
    .addColumn('user_id', 'uuid')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('success', 'boolean', (c) => c.notNull())
    .addColumn('error_message', 'text')
    .addColumn('ip_address', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('actor_type', 'text')
    .addColumn('actor_id', 'uuid')
    .addColumn('metadata', 'jsonb', emptyObject)
    .addColumn('created_at', 'timestamptz', now)
    .addCheckConstraint(
      'audit_log_action_check',
      sql`action in ('LOGIN', 'LOGOUT', 'REFRESH_TOKEN', 'REGISTER', 'USER_DELETE', 'ROLE_ASSIGN',
        'ROLE_REMOVE', 'PERMISSION_GRANT', 'PERMISSION_REVOKE')`,
    )
    .addCheckConstraint('audit_log_actor_type_check', sql`actor_type in ('user', 'client_key')`)
    .addCheckConstraint('audit_log_metadata_object', sql`jsonb_typeof(metadata) = 'object'`)
    .execute()
  for (const [name, cols] of [
    ['audit_log_tenant_time', ['tenant_id', 'created_at desc']],
    ['audit_log_tenant_action_time', ['tenant_id', 'action', 'created_at desc']],
    ['audit_log_tenant_ip_time', ['tenant_id', 'ip_address', 'created_at desc']],
  ] as const) {
    await index(db, name, 'audit_log', [...cols])
  }

  // Rows are immutable. The one escape: relocating a tenant to its own database copies its rows there,
  // then deletes them here, in a transaction that has run SET LOCAL tessera.audit_relocation = 'on'.
  await sql`create function audit_log_immutable() returns trigger language plpgsql as $fn$
begin
  if tg_op = 'DELETE' and coalesce(current_setting('tessera.audit_relocation', true), '') = 'on' then
    return old;
  end if;
  raise exception 'audit_log rows are immutable (% refused)', tg_op using errcode = '42501';
end
$fn$`.execute(db)
  await sql`create trigger audit_log_no_update before update on audit_log
    for each row execute function audit_log_immutable()`.execute(db)
  await sql`create trigger audit_log_no_delete before delete on audit_log
    for each row execute function audit_log_immutable()`.execute(db)
  await sql`create trigger audit_log_no_truncate before truncate on audit_log
    for each statement execute function audit_log_immutable()`.execute(db)
}

async function seedBuiltinPermissions(db: Kysely<unknown>): Promise<void> {
  const rows = BUILTIN_PERMISSIONS.map(([name, description]) => {
    const [resource, action] = name.split(':')
    return sql`(null, ${name}, ${resource}, ${action}, ${description}, true)`
  })
  await sql`insert into permissions (tenant_id, name, resource, action, description, is_system)
    values ${sql.join(rows)}`.execute(db)
}

/** The first schema: every table of the service, the audit trigger and the built-in permissions. */
export const initial: Migration = {
  async up(db: Kysely<unknown>) {
    await createTenantTables(db)
    await createPrincipalTables(db)
    await createGrantTables(db)
    await createSessionTables(db)
    await createClientKeyTables(db)
    await createAuditLog(db)
    await seedBuiltinPermissions(db)
  },
  async down(db: Kysely<unknown>) {
    for (const table of TABLES_IN_DROP_ORDER) await db.schema.dropTable(table).ifExists().cascade().execute()
    await sql`drop function if exists audit_log_immutable()`.execute(db)
  },
}
