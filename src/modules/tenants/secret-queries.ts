import type { Insertable, Kysely, Transaction } from 'kysely'
import type { Database, TenantSecretsTable, TenantSigningKeysTable } from '../../db/database.js'
import type { SigningLookup } from '../../security/lookups.js'

// The tenant_secrets (HS256) and tenant_signing_keys (EdDSA, ES256) tables, the tenants module's: what
// secrets.ts and signing-keys.ts change, and what the keystore reads (through SigningLookup).

/** The tenant's current HS256 secret (encrypted), or undefined while it uses the service default. */
export function findCurrentSecret(db: Kysely<Database>, tenantId: string) {
  return db
    .selectFrom('tenant_secrets')
    .select(['kid', 'secret_enc', 'created_at'])
    .where('tenant_id', '=', tenantId)
    .where('retired_at', 'is', null)
    .executeTakeFirst()
}

/** The id and kid of the tenant's current HS256 secret, or undefined. */
export function findCurrentSecretId(db: Kysely<Database>, tenantId: string) {
  return db
    .selectFrom('tenant_secrets')
    .select(['id', 'kid'])
    .where('tenant_id', '=', tenantId)
    .where('retired_at', 'is', null)
    .executeTakeFirst()
}

/** Deletes the tenant's retired HS256 secrets (a rotation ends every older one at once). */
export async function deleteRetiredSecrets(trx: Transaction<Database>, tenantId: string): Promise<void> {
  await trx
    .deleteFrom('tenant_secrets')
    .where('tenant_id', '=', tenantId)
    .where('retired_at', 'is not', null)
    .execute()
}

/** Retires one secret at `now`; it keeps verifying until `until`. */
export async function retireSecret(trx: Transaction<Database>, id: string, now: Date, until: Date) {
  await trx
    .updateTable('tenant_secrets')
    .set({ retired_at: now, expires_at: until })
    .where('id', '=', id)
    .execute()
}

/** Stores a new current secret (encrypted by the caller). */
export async function insertSecret(trx: Transaction<Database>, row: Insertable<TenantSecretsTable>) {
  await trx.insertInto('tenant_secrets').values(row).execute()
}

/** Deletes the tenant's retired key pairs of one purpose (the access tokens' unless told). */
export async function deleteRetiredKeyPairs(
  trx: Transaction<Database>,
  tenantId: string,
  purpose: 'access' | 'oidc' = 'access',
): Promise<void> {
  await trx
    .deleteFrom('tenant_signing_keys')
    .where('tenant_id', '=', tenantId)
    .where('purpose', '=', purpose)
    .where('retired_at', 'is not', null)
    .execute()
}

/** Retires the tenant's current key pair at `now`; it keeps verifying until `until`. */
export async function retireCurrentKeyPair(
  trx: Transaction<Database>,
  tenantId: string,
  now: Date,
  until: Date,
  purpose: 'access' | 'oidc' = 'access',
): Promise<void> {
  await trx
    .updateTable('tenant_signing_keys')
    .set({ retired_at: now, expires_at: until })
    .where('tenant_id', '=', tenantId)
    .where('purpose', '=', purpose)
    .where('retired_at', 'is', null)
    .execute()
}

/** True when the tenant has a current key pair of this purpose. */
export async function hasCurrentKeyPair(
  trx: Transaction<Database>,
  tenantId: string,
  purpose: 'access' | 'oidc',
): Promise<boolean> {
  const row = await trx
    .selectFrom('tenant_signing_keys')
    .select('kid')
    .where('tenant_id', '=', tenantId)
    .where('purpose', '=', purpose)
    .where('retired_at', 'is', null)
    .executeTakeFirst()
  return row !== undefined
}

/** Stores a new current key pair (its private key sealed by the caller). */
export async function insertKeyPair(trx: Transaction<Database>, row: Insertable<TenantSigningKeysTable>) {
  await trx.insertInto('tenant_signing_keys').values(row).execute()
}

/** What the keystore reads of the tenants module's tables, on the main database. */
export function signingLookup(db: Kysely<Database>): SigningLookup {
  return {
    tenant: (tenantId) =>
      db
        .selectFrom('tenants')
        .select(['metadata', 'auth_config'])
        .where('id', '=', tenantId)
        .executeTakeFirst(),
    keyPairs: (tenantId) =>
      db
        .selectFrom('tenant_signing_keys')
        .select(['kid', 'algorithm', 'purpose', 'private_key_enc', 'public_jwk', 'retired_at', 'expires_at'])
        .where('tenant_id', '=', tenantId)
        .execute(),
    secrets: (tenantId) =>
      db
        .selectFrom('tenant_secrets')
        .select(['kid', 'secret_enc', 'retired_at', 'expires_at'])
        .where('tenant_id', '=', tenantId)
        .execute(),
  }
}
