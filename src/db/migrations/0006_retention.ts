import { sql, type Kysely, type Migration } from 'kysely'
import { asOwner, whoAmI } from './0002_audit_guard.js'

// Retention and sweeping (docs/decisions.md D15): indexes that let each bounded batch find the oldest
// rows without scanning a table. Frozen once released.

export const retention: Migration = {
  async up(db: Kysely<unknown>) {
    const who = await whoAmI(db)
    // audit_log belongs to tessera_audit_owner (0002): its index is made as the owner.
    await asOwner(db, who, async () => {
      if (!who.superuser) await sql`set local role tessera_audit_owner`.execute(db)
      await sql`create index audit_log_created_at on audit_log (created_at)`.execute(db)
      if (!who.superuser) await sql`reset role`.execute(db)
    })
    await sql`create index client_key_usage_created_at on client_key_usage (created_at)`.execute(db)
    // A session is dead from its revocation, or else from its expiry.
    await sql`create index sessions_dead_since on sessions ((coalesce(revoked_at, expires_at)))`.execute(db)
    await sql`create index refresh_tokens_expires_at on refresh_tokens (expires_at)`.execute(db)
  },

  async down(db: Kysely<unknown>) {
    const who = await whoAmI(db)
    await sql`drop index refresh_tokens_expires_at`.execute(db)
    await sql`drop index sessions_dead_since`.execute(db)
    await sql`drop index client_key_usage_created_at`.execute(db)
    await asOwner(db, who, async () => {
      if (!who.superuser) await sql`set local role tessera_audit_owner`.execute(db)
      await sql`drop index audit_log_created_at`.execute(db)
      if (!who.superuser) await sql`reset role`.execute(db)
    })
  },
}
