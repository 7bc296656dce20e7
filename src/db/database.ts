import type { ColumnType, Generated } from 'kysely'

// Column names are the database's snake_case names: no CamelCasePlugin, so a query reads like its SQL.

/** timestamptz filled by `default now()`: read as Date, optional on insert. */
export type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>
/** timestamptz without a default. */
export type Timestamp = ColumnType<Date, Date | string, Date | string>
/** Nullable timestamptz, null unless set. */
export type NullableTimestamp = ColumnType<
  Date | null,
  Date | string | null | undefined,
  Date | string | null
>

/**
 * jsonb holding an object. `pg` serializes a plain object parameter with JSON.stringify, so objects may be
 * written as they are; a JSON text is accepted too.
 */
export type JsonObjectColumn<T extends object = Record<string, unknown>> = ColumnType<
  T,
  T | string | undefined,
  T | string
>

/**
 * jsonb holding an array. Written as JSON text only (see `jsonb()`): `pg` turns a JS array parameter into a
 * PostgreSQL array literal (`{"a","b"}`), which jsonb rejects, so the type forbids passing the array itself.
 */
export type JsonArrayColumn<T> = ColumnType<T[], string | undefined, string>

/** JSON text for a jsonb parameter; required for arrays (JsonArrayColumn), harmless for objects. */
export function jsonb(value: unknown): string {
  return JSON.stringify(value)
}

/** A column name without its table: `'users.id'` → `'id'` (for row types derived from column lists). */
export type Unqualified<C extends string> = C extends `${string}.${infer Name}` ? Name : C

/** A row as `row_to_json` renders it: timestamps become ISO strings. */
export type JsonRow<T> = {
  [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K]
}

export const TENANT_STATUSES = ['ACTIVE', 'INACTIVE'] as const
export type TenantStatus = (typeof TENANT_STATUSES)[number]

export const USER_STATUSES = ['ACTIVE', 'INACTIVE', 'SUSPENDED'] as const
export type UserStatus = (typeof USER_STATUSES)[number]

export const CLIENT_KEY_STATUSES = ['ACTIVE', 'REVOKED', 'EXPIRED'] as const
export type ClientKeyStatus = (typeof CLIENT_KEY_STATUSES)[number]

export const ACTOR_TYPES = ['user', 'client_key'] as const
export type ActorType = (typeof ACTOR_TYPES)[number]

export const AUDIT_ACTIONS = [
  'LOGIN',
  'LOGOUT',
  'REFRESH_TOKEN',
  'REGISTER',
  'USER_DELETE',
  'ROLE_ASSIGN',
  'ROLE_REMOVE',
  'PERMISSION_GRANT',
  'PERMISSION_REVOKE',
  'PASSWORD_CHANGED',
  'PASSWORD_RESET',
  'SESSIONS_REVOKED',
  'ACCOUNT_LOCKED',
  'ACCOUNT_UNLOCKED',
  'OTP_ENABLED',
  'OTP_DISABLED',
  'OTP_RECOVERY_CODES_RENEWED',
  'PASSWORD_RESET_REQUESTED',
  'EMAIL_VERIFICATION_SENT',
  'EMAIL_VERIFIED',
  'PASSKEY_ADDED',
  'PASSKEY_REMOVED',
  'EMAIL_CHANGE_REQUESTED',
  'EMAIL_CHANGED',
  'ROLE_CREATE',
  'ROLE_UPDATE',
  'ROLE_DELETE',
  'PERMISSION_CREATE',
  'PERMISSION_UPDATE',
  'PERMISSION_DELETE',
  'USER_UPDATE',
  'TENANT_CREATE',
  'TENANT_UPDATE',
  'TENANT_DELETE',
  'TENANT_CONFIG_UPDATE',
  'TENANT_DATABASE_ROUTE',
  'CLIENT_KEY_CREATE',
  'CLIENT_KEY_UPDATE',
  'CLIENT_KEY_ROTATE',
  'CLIENT_KEY_REVOKE',
  'PUBLISHABLE_KEY_CREATE',
  'PUBLISHABLE_KEY_UPDATE',
  'PUBLISHABLE_KEY_REVOKE',
  'OAUTH_CONSENT',
  'OAUTH_TOKEN',
  'OAUTH_CLIENT_CREATE',
  'OAUTH_CLIENT_UPDATE',
  'OAUTH_CLIENT_DELETE',
  'IDENTITY_PROVIDER_CREATE',
  'IDENTITY_PROVIDER_UPDATE',
  'IDENTITY_PROVIDER_DELETE',
  'IDENTITY_LINKED',
  'IDENTITY_UNLINKED',
] as const
export type AuditAction = (typeof AUDIT_ACTIONS)[number]

export interface ServiceSettingsTable {
  key: string
  value: string
  updated_at: CreatedAt
}

export interface TenantsTable {
  id: Generated<string>
  code: string
  name: string
  status: ColumnType<TenantStatus, TenantStatus | undefined, TenantStatus>
  auth_config: JsonObjectColumn
  /** Holds the JWT secret rotation history, among other operator data. */
  metadata: JsonObjectColumn
  created_at: CreatedAt
  updated_at: CreatedAt
}

export interface TenantSecretsTable {
  id: Generated<string>
  tenant_id: string
  kid: string
  /** Encrypted with SECRETS_KEY; never returned by a query that does not need it. */
  secret_enc: string
  created_at: CreatedAt
  /** null on the current secret (at most one per tenant). */
  retired_at: NullableTimestamp
  /** A retired secret still verifies tokens until then. */
  expires_at: NullableTimestamp
}

export interface TenantDatabasesTable {
  tenant_id: string
  /** Encrypted connection URL (it carries credentials). */
  url_enc: string
  host: string
  database_name: string
  created_at: CreatedAt
  updated_at: CreatedAt
}

export interface UsersTable {
  id: Generated<string>
  tenant_id: string
  email: string | null
  username: string | null
  /** Digits only: 11 (CPF) or 14 (CNPJ). */
  cpf_cnpj: string | null
  password_hash: string
  status: ColumnType<UserStatus, UserStatus | undefined, UserStatus>
  email_verified: Generated<boolean>
  otp_enabled: Generated<boolean>
  /** Bumped by a trigger when the password, email or status changes (migration 0015): mail tokens die with it. */
  security_version: Generated<number>
  created_at: CreatedAt
  updated_at: CreatedAt
  last_login_at: NullableTimestamp
}

export interface RolesTable {
  id: Generated<string>
  tenant_id: string
  name: string
  description: string | null
  level: number
  is_system: Generated<boolean>
  created_at: CreatedAt
  updated_at: CreatedAt
}

export interface PermissionsTable {
  id: Generated<string>
  /** null for the built-in catalogue shared by every tenant. */
  tenant_id: string | null
  name: string
  resource: string
  action: string
  description: string | null
  is_system: Generated<boolean>
  created_at: CreatedAt
}

export interface RolePermissionsTable {
  tenant_id: string
  role_id: string
  permission_id: string
}

export interface UserRolesTable {
  tenant_id: string
  user_id: string
  role_id: string
  created_at: CreatedAt
}

export interface UserPermissionsTable {
  tenant_id: string
  user_id: string
  permission_id: string
  created_at: CreatedAt
}

export interface SessionsTable {
  id: Generated<string>
  tenant_id: string
  user_id: string
  created_at: CreatedAt
  last_used_at: CreatedAt
  expires_at: Timestamp
  revoked_at: NullableTimestamp
  revoked_reason: string | null
  ip: string | null
  user_agent: string | null
  /** How the session was signed in (`pwd`, `otp`, `passkey`); null for sessions older than the column. */
  login_method: LoginMethod | null
}

/** How a session was signed in (the provider's `amr`, contract section 23). */
export type LoginMethod = 'pwd' | 'otp' | 'passkey' | 'fed'

export interface RefreshTokensTable {
  id: Generated<string>
  tenant_id: string
  session_id: string
  /** SHA-256 hex of the token value. */
  token_hash: string
  /** The token carries this row's id (the selector form, migration 0020): found by id, then hash. */
  by_selector: Generated<boolean>
  created_at: CreatedAt
  expires_at: Timestamp
  revoked_at: NullableTimestamp
  rotated_at: NullableTimestamp
  replaced_by: string | null
}

export interface ClientKeysTable {
  id: Generated<string>
  tenant_id: string
  name: string
  prefix: string
  key_hash: string
  /** Hash of the value before the last rotation, honoured until previous_key_expires_at. */
  previous_key_hash: string | null
  previous_key_expires_at: NullableTimestamp
  /** jsonb array of permission names, like the allowlists (one serialization rule for all three). */
  scopes: JsonArrayColumn<string>
  ip_allowlist: JsonArrayColumn<string>
  origin_allowlist: JsonArrayColumn<string>
  status: ColumnType<ClientKeyStatus, ClientKeyStatus | undefined, ClientKeyStatus>
  expires_at: NullableTimestamp
  last_used_at: NullableTimestamp
  created_by_type: ActorType | null
  created_by_id: string | null
  /** The user whose authority stands behind the key (its creator, or its creating key's); null: operator. */
  behalf_user_id: string | null
  /** Every user who received a value of the key: its creator, each rotator (contract section 26). */
  behind_user_ids: JsonArrayColumn<string>
  created_at: CreatedAt
  updated_at: CreatedAt
  revoked_at: NullableTimestamp
}

export interface ClientKeyUsageTable {
  id: Generated<string>
  tenant_id: string
  /** No foreign key: buffered usage inserts must not fail after the key is deleted. */
  key_id: string
  method: string
  route: string
  status_code: number
  ip: string | null
  origin: string | null
  user_agent: string | null
  /** The request's X-Request-Id; null on rows written before migration 0002. */
  request_id: string | null
  created_at: CreatedAt
}

/** A key's usage rows of one UTC hour and route, counted (migration 0022). */
export interface ClientKeyUsageHourlyTable {
  key_id: string
  hour: Timestamp
  route: string
  total: number
  s2: number
  s4: number
  s5: number
}

/** Every usage row of the key before `covered_to` is counted in client_key_usage_hourly. */
export interface ClientKeyUsageMarksTable {
  key_id: string
  covered_to: Timestamp
}

/**
 * tessera_audit.audit_log, owned by tessera_audit_owner with its schema (migrations 0002 and 0008): the
 * service's role may SELECT and INSERT only; rows leave through tessera_audit.expire (retention).
 */
export interface AuditLogTable {
  id: Generated<string>
  /** No foreign key: audit rows outlive their tenant. */
  tenant_id: string
  user_id: string | null
  action: AuditAction
  success: boolean
  error_message: string | null
  ip_address: string | null
  user_agent: string | null
  actor_type: ActorType | null
  actor_id: string | null
  metadata: JsonObjectColumn
  /** The request's X-Request-Id; null on rows written before migration 0002 and outside a request. */
  request_id: string | null
  created_at: CreatedAt
}

/** Account-throttling counters per tenant and normalised identifier (when there is no Redis). */
export interface LoginThrottleTable {
  tenant_id: string
  /** `<kind>:<normalised value>`, e.g. `email:ana@acme.test`. */
  identifier: string
  failures: number
  window_started_at: Date
  locked_until: Date | null
  locks: number
  updated_at: CreatedAt
}

/** A user's TOTP secret (encrypted): the confirmed one, a pending setup, and the last step accepted. */
export interface UserOtpTable {
  user_id: string
  tenant_id: string
  secret_enc: string | null
  confirmed_at: Date | null
  pending_secret_enc: string | null
  pending_expires_at: Date | null
  /** The last TOTP step accepted (Unix seconds / 30): never accepted again. */
  last_step: Generated<string>
}

/** A user's recovery codes, as SHA-256 of the normalised code. */
export interface OtpRecoveryCodesTable {
  id: Generated<string>
  tenant_id: string
  user_id: string
  code_hash: string
  used_at: Date | null
}

/** A login waiting for its second factor: the mfaToken (SHA-256), single-use, 5 wrong codes, 300 s. */
export interface MfaTokensTable {
  id: Generated<string>
  tenant_id: string
  user_id: string
  token_hash: string
  /** Issued by OTP_ENROLLMENT_REQUIRED: the login enrolls an authenticator. */
  enrollment: boolean
  /** The login identifier's throttling key, for counting wrong codes (auth_config.lockout). */
  throttle_key: string
  failures: Generated<number>
  expires_at: Date
  created_at: CreatedAt
}

/** A tenant's asymmetric signing key pair (EdDSA or ES256): the current one, or one retired for 7 days. */
export interface TenantSigningKeysTable {
  id: Generated<string>
  tenant_id: string
  kid: string
  algorithm: 'EdDSA' | 'ES256' | 'RS256'
  /** `access`: the access tokens' pair; `oidc`: the RS256 pair of the OpenID provider (contract section 23). */
  purpose: ColumnType<'access' | 'oidc', 'access' | 'oidc' | undefined, 'access' | 'oidc'>
  /** PKCS#8 PEM sealed with SECRETS_KEY. */
  private_key_enc: string
  public_jwk: ColumnType<Record<string, unknown>, string, string>
  created_at: CreatedAt
  retired_at: Date | null
  expires_at: Date | null
}

/** Email tokens (migration 0011, src/modules/email): only the SHA-256 of a token is kept. */
export interface EmailTokensTable {
  id: Generated<string>
  tenant_id: string
  user_id: string
  purpose: 'reset' | 'verify' | 'change'
  token_hash: string
  /** The address the token was sent to: a verification token is void once the user's email changes. */
  email: string
  expires_at: ColumnType<Date, Date | string, Date | string>
  used_at: NullableTimestamp
  /** The user's security_version at issuance: the token is void once it moves. */
  user_version: Generated<number>
  created_at: CreatedAt
}

/** Audit rows of one tenant, closed UTC hour and action (migration 0014): GET /auth-logs/stats' rollup. */
export interface AuditHourlyCountsTable {
  tenant_id: string
  hour: ColumnType<Date, Date | string, Date | string>
  action: string
  success: number
  failure: number
}

/** Per tenant, the range of hours [covered_from, covered_to) that audit_hourly_counts holds counted. */
export interface AuditRollupMarksTable {
  tenant_id: string
  covered_from: ColumnType<Date, Date | string, Date | string>
  covered_to: ColumnType<Date, Date | string, Date | string>
}

export type OutboxStatus = 'pending' | 'sent' | 'failed' | 'expired'

/** The mail outbox (migration 0011, src/modules/email): one message per row, sent after its commit. */
export interface MailOutboxTable {
  id: Generated<string>
  tenant_id: string
  token_id: string | null
  recipient: string
  /** The rendered message, encrypted with SECRETS_KEY; null once the row is settled. */
  message_enc: string | null
  status: ColumnType<OutboxStatus, OutboxStatus | undefined, OutboxStatus>
  attempts: ColumnType<number, number | undefined, number>
  next_attempt_at: CreatedAt
  /** A sender's lease. */
  locked_until: NullableTimestamp
  last_error: string | null
  expires_at: ColumnType<Date, Date | string, Date | string>
  sent_at: NullableTimestamp
  created_at: CreatedAt
}

export type PublishableKeyStatus = 'ACTIVE' | 'REVOKED'

/** Publishable keys (migration 0012, src/modules/publishable-keys): public, so the value is stored whole. */
export interface PublishableKeysTable {
  id: Generated<string>
  tenant_id: string
  name: string
  key: string
  allowed_origins: JsonArrayColumn<string>
  default_roles: JsonArrayColumn<string>
  signups_per_hour: number
  /** The user who created the key; null for the operator or a Client Key. */
  created_by: string | null
  status: ColumnType<PublishableKeyStatus, PublishableKeyStatus | undefined, PublishableKeyStatus>
  created_at: CreatedAt
  updated_at: CreatedAt
  revoked_at: NullableTimestamp
}

/** ALTCHA solutions already used (migration 0012), kept until their challenge expires. */
export interface SignupChallengesUsedTable {
  /** The challenge's HMAC signature (hex): one per issued challenge. */
  signature: string
  expires_at: ColumnType<Date, Date | string, Date | string>
}

/** The whole schema as Kysely sees it. */
/** A user's passkey: one WebAuthn credential (migration 0013). */
export interface PasskeysTable {
  id: Generated<string>
  tenant_id: string
  user_id: string
  /** The authenticator's credential id, base64url; unique within the tenant. */
  credential_id: string
  /** The credential's COSE public key as registered, base64url. */
  public_key: string
  /** The last signature counter seen (0: the authenticator keeps none). */
  counter: ColumnType<string, string | number | undefined, string | number>
  transports: Generated<string[]>
  device_type: 'singleDevice' | 'multiDevice'
  backed_up: boolean
  name: string
  created_at: CreatedAt
  last_used_at: Date | null
}

/** A single-use WebAuthn challenge of a registration (bound to its user) or a login (migration 0013). */
export interface PasskeyChallengesTable {
  id: Generated<string>
  tenant_id: string
  user_id: string | null
  purpose: 'register' | 'login'
  challenge_hash: string
  expires_at: Date
  created_at: CreatedAt
}

/** A tenant's OAuth client (contract section 23); the secret only as a SHA-256 hash. */
export interface OAuthClientsTable {
  id: Generated<string>
  tenant_id: string
  client_id: string
  name: string
  type: 'confidential' | 'public'
  token_endpoint_auth_method: 'client_secret_basic' | 'client_secret_post' | 'none'
  redirect_uris: ColumnType<string[], string, string>
  post_logout_redirect_uris: ColumnType<string[], string | undefined, string>
  grant_types: ColumnType<string[], string, string>
  scopes: ColumnType<string[], string, string>
  first_party: Generated<boolean>
  dynamic: Generated<boolean>
  backchannel_logout_uri: string | null
  logo_uri: string | null
  client_uri: string | null
  secret_hash: string | null
  previous_secret_hash: string | null
  previous_secret_expires_at: Date | null
  created_at: CreatedAt
  updated_at: CreatedAt
}

/** A tenant's identity provider (contract section 24); the client secret sealed by lib/crypto-box.ts. */
export interface IdentityProvidersTable {
  id: Generated<string>
  tenant_id: string
  name: string
  kind: 'oidc' | 'oauth2'
  preset: 'google' | 'microsoft' | 'github' | null
  issuer: string | null
  authorization_endpoint: string
  token_endpoint: string
  userinfo_endpoint: string | null
  jwks_uri: string | null
  client_id: string
  client_secret_enc: string
  token_endpoint_auth_method: 'client_secret_basic' | 'client_secret_post'
  scopes: ColumnType<string[], string, string>
  claim_mapping: ColumnType<Record<string, string>, string, string>
  allow_signup: Generated<boolean>
  trust_email: Generated<boolean>
  linking: Generated<'never' | 'verified_email'>
  allowed_domains: ColumnType<string[], string | undefined, string>
  default_roles: ColumnType<string[], string | undefined, string>
  show_on_login: Generated<boolean>
  created_at: CreatedAt
  updated_at: CreatedAt
}

/** A federated sign-in between its authorize step and the provider's return (contract section 24). */
export interface FederationFlowsTable {
  id: Generated<string>
  tenant_id: string
  provider_id: string
  state_hash: string
  binding_hash: string
  nonce: string
  verifier_enc: string
  return_to: string
  code_challenge: string
  intent: Generated<'login' | 'link'>
  link_user_id: string | null
  created_at: CreatedAt
  expires_at: Date
}

/** The login code a federated sign-in ended with, until POST /login/federated takes it. */
export interface FederationCodesTable {
  id: Generated<string>
  tenant_id: string
  user_id: string
  provider_id: string
  code_hash: string
  code_challenge: string
  created_at: CreatedAt
  expires_at: Date
}

/** A single-use token of POST /me/identities/link-token (its SHA-256). */
export interface FederationLinkTokensTable {
  id: Generated<string>
  tenant_id: string
  user_id: string
  token_hash: string
  created_at: CreatedAt
  expires_at: Date
}

/** A provider's person linked to a user: (tenant, provider, subject), never the email. */
export interface UserIdentitiesTable {
  id: Generated<string>
  tenant_id: string
  user_id: string
  provider_id: string
  subject: string
  email: string | null
  created_at: CreatedAt
  last_used_at: Date | null
}

/** What `oidc-provider` stores, per (tenant, model, id): its adapter's table. */
export interface OidcPayloadsTable {
  tenant_id: string
  model: string
  id: string
  payload: ColumnType<Record<string, unknown>, string, string>
  grant_id: string | null
  uid: string | null
  user_code: string | null
  account_id: string | null
  expires_at: Date | null
  consumed_at: Date | null
}

export interface Database {
  service_settings: ServiceSettingsTable
  tenants: TenantsTable
  tenant_secrets: TenantSecretsTable
  tenant_databases: TenantDatabasesTable
  users: UsersTable
  roles: RolesTable
  permissions: PermissionsTable
  role_permissions: RolePermissionsTable
  user_roles: UserRolesTable
  user_permissions: UserPermissionsTable
  sessions: SessionsTable
  refresh_tokens: RefreshTokensTable
  client_keys: ClientKeysTable
  client_key_usage: ClientKeyUsageTable
  client_key_usage_hourly: ClientKeyUsageHourlyTable
  client_key_usage_marks: ClientKeyUsageMarksTable
  'tessera_audit.audit_log': AuditLogTable
  login_throttle: LoginThrottleTable
  user_otp: UserOtpTable
  otp_recovery_codes: OtpRecoveryCodesTable
  mfa_tokens: MfaTokensTable
  tenant_signing_keys: TenantSigningKeysTable
  email_tokens: EmailTokensTable
  audit_hourly_counts: AuditHourlyCountsTable
  audit_rollup_marks: AuditRollupMarksTable
  mail_outbox: MailOutboxTable
  publishable_keys: PublishableKeysTable
  signup_challenges_used: SignupChallengesUsedTable
  passkeys: PasskeysTable
  passkey_challenges: PasskeyChallengesTable
  oauth_clients: OAuthClientsTable
  oidc_payloads: OidcPayloadsTable
  identity_providers: IdentityProvidersTable
  user_identities: UserIdentitiesTable
  federation_flows: FederationFlowsTable
  federation_codes: FederationCodesTable
  federation_link_tokens: FederationLinkTokensTable
}
