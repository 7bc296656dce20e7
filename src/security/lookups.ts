import type { Selectable } from 'kysely'
import type {
  ClientKeysTable,
  TenantSecretsTable,
  TenantSigningKeysTable,
  TenantStatus,
  TenantsTable,
} from '../db/database.js'

// What the credential checks need to look up, as interfaces: the modules implement them and the
// context hands them in (see createContext), so nothing in src/security imports a module.

/** A tenant as the credential checks see it. */
export interface DirectoryTenant {
  readonly id: string
  readonly code: string
  readonly status: TenantStatus
  readonly isPlatform: boolean
}

/** Tenants by id and by code (case-insensitive), or null; implemented by modules/tenants/cache.ts. */
export interface TenantDirectory<T extends DirectoryTenant = DirectoryTenant> {
  byId(id: string): Promise<T | null>
  byCode(code: string): Promise<T | null>
}

/** A stored Client Key with its tenant's code and status. */
export type StoredKey = Pick<
  Selectable<ClientKeysTable>,
  | 'id'
  | 'tenant_id'
  | 'key_hash'
  | 'previous_key_hash'
  | 'previous_key_expires_at'
  | 'scopes'
  | 'ip_allowlist'
  | 'origin_allowlist'
  | 'status'
  | 'expires_at'
  | 'behalf_user_id'
  | 'behind_user_ids'
> & { readonly tenant_code: string; readonly tenant_status: TenantStatus }

/**
 * The key whose current or rotated-out value has this SHA-256 (hex), or undefined; implemented by
 * modules/client-keys/auth-queries.ts.
 */
export type KeyLookup = (hash: string) => Promise<StoredKey | undefined>

/**
 * The rows the keystore builds a tenant's keys from, each read on the main database; implemented by
 * modules/tenants/secret-queries.ts.
 */
export interface SigningLookup {
  /** The tenant's metadata (rotation records) and auth_config (its algorithm), or undefined. */
  tenant(tenantId: string): Promise<Pick<Selectable<TenantsTable>, 'metadata' | 'auth_config'> | undefined>
  /** Every key pair of the tenant, current and retired (private keys sealed). */
  keyPairs(
    tenantId: string,
  ): Promise<
    Pick<
      Selectable<TenantSigningKeysTable>,
      'kid' | 'algorithm' | 'purpose' | 'private_key_enc' | 'public_jwk' | 'retired_at' | 'expires_at'
    >[]
  >
  /** Every HS256 secret of the tenant, current and retired (encrypted). */
  secrets(
    tenantId: string,
  ): Promise<Pick<Selectable<TenantSecretsTable>, 'kid' | 'secret_enc' | 'retired_at' | 'expires_at'>[]>
}

/** What the recent-sign-in check learns of a token's user and session. */
export interface LiveSession {
  /** False once the user was deleted (its sessions went with it). */
  readonly userExists: boolean
  /** The login time (seconds since the epoch) of the named session while it is live, else undefined. */
  readonly loginAt: number | undefined
}

/**
 * Whether `userId` exists in the tenant, and the login time of the session `sessionId` when it is a live
 * session of that user; implemented by modules/sessions/queries.ts.
 */
export type SessionLookup = (
  tenantId: string,
  sessionId: string,
  userId: string,
  nowMs: number,
) => Promise<LiveSession>
