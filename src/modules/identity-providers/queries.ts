import type { Insertable, Kysely, Selectable, Updateable } from 'kysely'
import type { Database, IdentityProvidersTable } from '../../db/database.js'
import { paginate, type PageParams } from '../../db/paginate.js'

// The identity_providers table (contract section 24), the identity-providers module's.

/** A provider row, every column (the secret sealed). */
export type IdentityProviderRow = Selectable<IdentityProvidersTable>

/** Inserts a provider and returns it. */
export async function insertIdentityProvider(
  db: Kysely<Database>,
  row: Insertable<IdentityProvidersTable>,
): Promise<IdentityProviderRow> {
  return db.insertInto('identity_providers').values(row).returningAll().executeTakeFirstOrThrow()
}

/** One page of the tenant's providers, newest first. */
export async function listIdentityProviders(db: Kysely<Database>, tenantId: string, page: PageParams) {
  return paginate(
    db
      .selectFrom('identity_providers')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc'),
    page,
  )
}

/** The tenant's provider by id, or undefined. */
export async function findIdentityProvider(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
): Promise<IdentityProviderRow | undefined> {
  return db
    .selectFrom('identity_providers')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/** The providers a tenant's sign-in page shows, oldest first. */
export async function listLoginProviders(db: Kysely<Database>, tenantId: string) {
  return db
    .selectFrom('identity_providers')
    .select(['id', 'name', 'kind'])
    .where('tenant_id', '=', tenantId)
    .where('show_on_login', '=', true)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .limit(100)
    .execute()
}

/** Changes the given columns (and updated_at); undefined when there is no such provider. */
export async function updateIdentityProvider(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
  set: Updateable<IdentityProvidersTable>,
): Promise<IdentityProviderRow | undefined> {
  return db
    .updateTable('identity_providers')
    .set({ ...set, updated_at: new Date() })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
}

/** Deletes a provider (its links go by the foreign key); whether there was one. */
export async function deleteIdentityProvider(db: Kysely<Database>, tenantId: string, id: string) {
  const gone = await db
    .deleteFrom('identity_providers')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst()
  return gone !== undefined
}
