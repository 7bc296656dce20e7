import type { Insertable, Kysely, Selectable, Transaction } from 'kysely'
import type { Database, OAuthClientsTable } from '../../db/database.js'
import { paginate, type PageParams } from '../../db/paginate.js'

// The oauth_clients table (contract section 23), the oauth-clients module's: what the management operations
// change, and what the OpenID provider reads a client from (by tenant and client_id).

/** A client row, every column but the hashes. */
export type OAuthClientRow = Omit<
  Selectable<OAuthClientsTable>,
  'secret_hash' | 'previous_secret_hash' | 'previous_secret_expires_at'
>

/** A client row with its secret hashes, for the provider's client authentication. */
export type OAuthClientWithHashes = Selectable<OAuthClientsTable>

const COLUMNS = [
  'id',
  'tenant_id',
  'client_id',
  'name',
  'type',
  'token_endpoint_auth_method',
  'redirect_uris',
  'post_logout_redirect_uris',
  'grant_types',
  'scopes',
  'first_party',
  'dynamic',
  'backchannel_logout_uri',
  'logo_uri',
  'client_uri',
  'created_at',
  'updated_at',
] as const

/** Inserts a client and returns it. */
export async function insertOAuthClient(
  db: Kysely<Database> | Transaction<Database>,
  row: Insertable<OAuthClientsTable>,
): Promise<OAuthClientRow> {
  return db.insertInto('oauth_clients').values(row).returning(COLUMNS).executeTakeFirstOrThrow()
}

/** One page of the tenant's clients, newest first. */
export async function listOAuthClients(db: Kysely<Database>, tenantId: string, page: PageParams) {
  return paginate(
    db
      .selectFrom('oauth_clients')
      .select(COLUMNS)
      .where('tenant_id', '=', tenantId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc'),
    page,
  )
}

/** The tenant's client by id, or undefined. */
export async function findOAuthClient(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
): Promise<OAuthClientRow | undefined> {
  return db
    .selectFrom('oauth_clients')
    .select(COLUMNS)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/** The tenant's client by id with its secret hashes, or undefined (a rotation). */
export async function findOAuthClientHashes(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
): Promise<OAuthClientWithHashes | undefined> {
  return db
    .selectFrom('oauth_clients')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/** The tenant's client by its OAuth client_id, hashes included, or undefined (the provider's lookup). */
export async function findOAuthClientByClientId(
  db: Kysely<Database>,
  tenantId: string,
  clientId: string,
): Promise<OAuthClientWithHashes | undefined> {
  return db
    .selectFrom('oauth_clients')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('client_id', '=', clientId)
    .executeTakeFirst()
}

/** Applies a change to the tenant's client and returns it, or undefined when there is none. */
export async function updateOAuthClient(
  db: Kysely<Database> | Transaction<Database>,
  tenantId: string,
  id: string,
  set: Partial<Omit<Insertable<OAuthClientsTable>, 'id' | 'tenant_id' | 'client_id' | 'created_at'>>,
): Promise<OAuthClientRow | undefined> {
  return db
    .updateTable('oauth_clients')
    .set({ ...set, updated_at: new Date() })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirst()
}

/** Deletes the tenant's client; its client_id, or undefined when there was none. */
export async function deleteOAuthClient(
  trx: Transaction<Database>,
  tenantId: string,
  id: string,
): Promise<string | undefined> {
  const row = await trx
    .deleteFrom('oauth_clients')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returning('client_id')
    .executeTakeFirst()
  return row?.client_id
}

/** The names of the tenant's clients among these client_ids, in one statement (a user's grants). */
export async function oauthClientNames(
  db: Kysely<Database>,
  tenantId: string,
  clientIds: readonly string[],
): Promise<Map<string, string>> {
  if (clientIds.length === 0) return new Map()
  const rows = await db
    .selectFrom('oauth_clients')
    .select(['client_id', 'name'])
    .where('tenant_id', '=', tenantId)
    .where('client_id', 'in', clientIds)
    .execute()
  return new Map(rows.map((r) => [r.client_id, r.name]))
}
