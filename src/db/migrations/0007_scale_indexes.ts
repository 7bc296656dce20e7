import { sql, type Kysely, type Migration } from 'kysely'
import { asOwner, whoAmI } from './0002_audit_guard.js'

// Indexes the 10-million-row benchmark asked for (`make bench-scale`, docs/scale-explain.md). Frozen once
// released.
//
// - audit_log (tenant_id, user_id, created_at desc): GET /auth-logs?userId= scanned the whole table.
// - audit_log_tenant_action_time gains INCLUDE (success): the `success` filter of GET /auth-logs and the
//   security metrics' failure counts read it from the index instead of one heap page per row.
// - client_key_usage_key_time gains INCLUDE (tenant_id, status_code, route): a key's stats are counted
//   from the index alone (index-only scan) instead of a heap page per usage row.
//
// - users: a trigram index for GET /users?q= (a substring of email, username or cpf_cnpj, which no btree
//   serves), where pg_trgm can be had: PostgreSQL ships it and marks it trusted (13+), so a role with
//   CREATE on the database may add it. Elsewhere (PGlite, a role without that right) the search scans
//   the tenant's users as before; nothing fails.
//
// `if not exists` on the new names: on a large database an operator may build them first with CREATE
// INDEX CONCURRENTLY (this migration runs in a transaction, where a plain CREATE INDEX blocks inserts
// into the table while it builds).

/** Runs `fn` as tessera_audit_owner, which owns audit_log (0002), as 0006 does. */
async function onAuditLog(db: Kysely<unknown>, fn: () => Promise<void>): Promise<void> {
  const who = await whoAmI(db)
  await asOwner(db, who, async () => {
    if (!who.superuser) await sql`set local role tessera_audit_owner`.execute(db)
    await fn()
    if (!who.superuser) await sql`reset role`.execute(db)
  })
}

export const scaleIndexes: Migration = {
  async up(db: Kysely<unknown>) {
    await onAuditLog(db, async () => {
      await sql`create index if not exists audit_log_tenant_user_time
        on audit_log (tenant_id, user_id, created_at desc)`.execute(db)
      await sql`create index if not exists audit_log_tenant_action_time_success
        on audit_log (tenant_id, action, created_at desc) include (success)`.execute(db)
      await sql`drop index if exists audit_log_tenant_action_time`.execute(db)
    })
    await sql`create index if not exists client_key_usage_key_time_covering
      on client_key_usage (key_id, created_at desc) include (tenant_id, status_code, route)`.execute(db)
    await sql`drop index if exists client_key_usage_key_time`.execute(db)
    await sql`do $$ begin
        create extension if not exists pg_trgm;
      exception when insufficient_privilege or undefined_file or feature_not_supported then null;
      end $$`.execute(db)
    // Why the schema looked up: an extension installed into a schema off the search_path (as some
    // DBAs do) would leave gin_trgm_ops unresolved and fail the migration, and with it the start.
    await sql`do $$ declare nsp text;
      begin
        select n.nspname into nsp from pg_extension e join pg_namespace n on n.oid = e.extnamespace
          where e.extname = 'pg_trgm';
        if nsp is not null then
          execute format('create index if not exists users_search_trgm on users using gin
            (lower(email) %1$I.gin_trgm_ops, lower(username) %1$I.gin_trgm_ops, cpf_cnpj %1$I.gin_trgm_ops)', nsp);
        end if;
      end $$`.execute(db)
  },

  async down(db: Kysely<unknown>) {
    await sql`drop index if exists users_search_trgm`.execute(db)
    await sql`create index client_key_usage_key_time on client_key_usage (key_id, created_at desc)`.execute(
      db,
    )
    await sql`drop index client_key_usage_key_time_covering`.execute(db)
    await onAuditLog(db, async () => {
      await sql`create index audit_log_tenant_action_time on audit_log (tenant_id, action, created_at desc)`.execute(
        db,
      )
      await sql`drop index audit_log_tenant_action_time_success`.execute(db)
      await sql`drop index audit_log_tenant_user_time`.execute(db)
    })
  },
}
