import { sql, type Kysely, type Migration } from 'kysely'

// Contract section 22, "a credential never raises its own user". Frozen once released.
//
// `client_keys.created_by_type/_id` (0001) name the direct creator, user or key: the API's `createdBy`.
// `behalf_user_id` is the user whose authority stands behind the key: its creator when a user made it,
// the creating key's own `behalf_user_id` when a key made it, null when the operator (CLI, bootstrap)
// did. The creator rule reads it, so a key cannot launder its creator's authority through a key it
// makes itself (key A of admin X creates key B; B is still X's, and may not reset X's password either).

export const keyCreators: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table client_keys add column if not exists behalf_user_id uuid`.execute(db)
    // Why a recursive walk: keys made by keys made by a user, however deep, stand for that user.
    await sql`
      with recursive chain (id, behalf) as (
        select id, created_by_id from client_keys where created_by_type = 'user'
        union
        select k.id, chain.behalf from client_keys k
          join chain on k.created_by_type = 'client_key' and k.created_by_id = chain.id
      )
      update client_keys c set behalf_user_id = chain.behalf from chain where c.id = chain.id`.execute(db)
  },
  async down(db: Kysely<unknown>) {
    await sql`alter table client_keys drop column if exists behalf_user_id`.execute(db)
  },
}
