import { sql, type Kysely, type Migration } from 'kysely'

// Refresh without index writes on `sessions` (issue 26, docs/performance.md). Every refresh updates the
// session's `last_used_at`, `expires_at`, `ip` and `user_agent`. 0006's expression index on
// coalesce(revoked_at, expires_at) made each of those updates a non-HOT one: a new entry in all four
// indexes of the table. Now no index names a column a refresh writes, and the table leaves room on each
// page (fillfactor), so the update stays on its page and touches no index. The sweeper finds dead
// sessions another way: revoked ones by a partial index on `revoked_at` (written once), expired ones
// through their latest refresh token's `expires_at` (0006's index), which equals the session's.
// Frozen once released.

export const hotSessions: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`drop index sessions_dead_since`.execute(db)
    await sql`create index sessions_revoked_at on sessions (revoked_at) where revoked_at is not null`.execute(
      db,
    )
    await sql`alter table sessions set (fillfactor = 80)`.execute(db)
    await sql`alter table refresh_tokens set (fillfactor = 90)`.execute(db)
    // Expired sessions whose latest token the old sweep already removed (it took tokens a day after
    // expiry, sessions only after the refresh lifetime too): nothing would find them any more. No token
    // of theirs is left to recognise as reuse, so they go now.
    await sql`delete from sessions s where s.revoked_at is null and s.expires_at < now() - interval '1 day'
      and not exists (select 1 from refresh_tokens t where t.session_id = s.id and t.replaced_by is null)`.execute(
      db,
    )
  },

  async down(db: Kysely<unknown>) {
    await sql`alter table refresh_tokens reset (fillfactor)`.execute(db)
    await sql`alter table sessions reset (fillfactor)`.execute(db)
    await sql`drop index sessions_revoked_at`.execute(db)
    await sql`create index sessions_dead_since on sessions ((coalesce(revoked_at, expires_at)))`.execute(db)
  },
}
