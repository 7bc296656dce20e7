import { sql, type Kysely, type Migration } from 'kysely'

// Refresh tokens as selector and verifier (issue 45, src/modules/sessions/refresh-token.ts). A row of
// the new form (`by_selector`) is found by its primary key, a UUIDv7 the token carries, and then its
// hash; a row of the older form still by its hash alone. Why the partial unique index: rows of the new
// form never enter an index keyed by a random hash, so a refresh no longer reads and writes a random leaf
// of one the size of shared buffers. The constant default adds the column without rewriting the table.
// Frozen once released.

export const refreshSelectors: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table refresh_tokens add column by_selector boolean not null default false`.execute(db)
    // Why "if not exists": on a large table an operator builds it first, CONCURRENTLY, without blocking the
    // refreshes (docs/deployment.md, "Upgrading"); the build here then costs nothing.
    await sql`create unique index if not exists refresh_tokens_hashed on refresh_tokens (token_hash)
      where not by_selector`.execute(db)
    await sql`alter table refresh_tokens drop constraint if exists refresh_tokens_token_hash_key`.execute(db)
  },

  async down(db: Kysely<unknown>) {
    // Tokens of the new form cannot be read without the column: their sessions end (revoked, so the sweep
    // finds them and the session limit stops counting them), and their people sign in again.
    await sql`update sessions set revoked_at = now(), revoked_reason = 'downgrade'
      where revoked_at is null
        and id in (select session_id from refresh_tokens where by_selector and replaced_by is null)`.execute(
      db,
    )
    await sql`delete from refresh_tokens where by_selector`.execute(db)
    await sql`alter table refresh_tokens add constraint refresh_tokens_token_hash_key unique (token_hash)`.execute(
      db,
    )
    await sql`drop index refresh_tokens_hashed`.execute(db)
    await sql`alter table refresh_tokens drop column by_selector`.execute(db)
  },
}
