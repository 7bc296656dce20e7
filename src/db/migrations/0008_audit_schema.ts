import { sql, type Kysely, type Migration } from 'kysely'
import { asOwner, whoAmI } from './0002_audit_guard.js'

// The audit log in a schema of its own owner (contract section 22, docs/decisions.md D17).
//
// 0002 left audit_log and its SECURITY DEFINER functions in `public`, with search_path
// `pg_catalog, public, pg_temp`. The service's role owns `public` and every table the functions read
// (`users`), so it could rename `users` and create a look-alike, or put a row-level-security policy on
// it that calls its own function, which then ran as tessera_audit_owner. From here on:
// - schema tessera_audit belongs to tessera_audit_owner; the table, its trigger function and the
//   functions that may remove rows live there, and their search_path is `pg_catalog, tessera_audit`;
// - every table and type they name is schema-qualified (pg_temp is searched first for relations and
//   types when the path does not name it), and they read only tables of tessera_audit;
// - the retention period is a row of tessera_audit.settings that only the owner (or a superuser) can
//   change, and tessera_audit.expire refuses a cutoff inside it (none configured: removes nothing);
// - a relocation no longer removes anything: tessera_audit.mark_relocated records that a tenant's rows
//   here were copied to another database, and they stay until retention removes them.
//
// Frozen once released: names and bodies are spelled out here, 0002's too (for down()).

const PATH = sql.raw('pg_catalog, tessera_audit')

/** The trigger: UPDATE and TRUNCATE never; DELETE only as tessera_audit_owner (tessera_audit.expire). */
const TRIGGER_FUNCTION = sql`create or replace function tessera_audit.audit_log_immutable() returns trigger
language plpgsql set search_path = ${PATH} as $fn$
begin
  if tg_op operator(pg_catalog.=) 'DELETE'
    and current_user operator(pg_catalog.=) 'tessera_audit_owner'::pg_catalog.name then
    return old;
  end if;
  raise exception 'audit_log rows are immutable (% refused)', tg_op using errcode = '42501';
end
$fn$`

/** Configuration of this database's audit log: one row. */
const SETTINGS_TABLE = sql`create table tessera_audit.settings (
  singleton boolean primary key default true check (singleton),
  -- Days an audit row is kept at least; null: kept forever.
  retention_days integer check (retention_days between 1 and 36500),
  updated_at timestamptz not null default pg_catalog.now()
)`

/** What relocations left behind: the tenant's rows here were copied elsewhere at `relocated_at`. */
const RELOCATIONS_TABLE = sql`create table tessera_audit.relocations (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  relocated_at timestamptz not null default pg_catalog.now()
)`

/** Retention: at most p_limit rows older than p_before, never one inside the configured period. */
const EXPIRE = sql`create function tessera_audit.expire(p_before timestamptz, p_limit integer)
returns bigint language plpgsql security definer set search_path = ${PATH} as $fn$
declare
  v_days integer;
  v_removed bigint;
begin
  if p_limit is null or p_limit operator(pg_catalog.<) 1 or p_limit operator(pg_catalog.>) 10000 then
    raise exception 'between 1 and 10000 rows per call' using errcode = '22023';
  end if;
  select s.retention_days into v_days from tessera_audit.settings s;
  if v_days is null then
    -- No period configured for this database: every row is kept.
    return 0;
  end if;
  -- Why the parentheses: operators written OPERATOR(...) all share one precedence, left to right.
  if p_before is null or p_before operator(pg_catalog.>)
      (pg_catalog.now() operator(pg_catalog.-) pg_catalog.make_interval(days => v_days)) then
    raise exception 'audit rows of the last % days are kept (tessera_audit.settings)', v_days
      using errcode = '22023';
  end if;
  delete from tessera_audit.audit_log a where a.id operator(pg_catalog.=) any (array(
    select o.id from tessera_audit.audit_log o where o.created_at operator(pg_catalog.<) p_before
    order by o.created_at limit p_limit));
  get diagnostics v_removed = row_count;
  return v_removed;
end
$fn$`

/** Relocation: records that the tenant's rows here were copied to another database; removes nothing. */
const MARK_RELOCATED = sql`create function tessera_audit.mark_relocated(p_tenant_id uuid)
returns void language plpgsql security definer set search_path = ${PATH} as $fn$
begin
  if p_tenant_id is null then
    raise exception 'a tenant id is required' using errcode = '22004';
  end if;
  insert into tessera_audit.relocations (tenant_id) values (p_tenant_id);
end
$fn$`

/**
 * The operators' way to set the period (docs/security.md, "Audit immutability"). Not SECURITY DEFINER: it works
 * for whoever may update tessera_audit.settings, the owner role or a superuser, and no one else.
 */
const SET_RETENTION = sql`create function tessera_audit.set_retention_days(p_days integer)
returns void language sql set search_path = ${PATH} as $fn$
  update tessera_audit.settings set retention_days = p_days, updated_at = pg_catalog.now()
$fn$`

/** The functions the service's role may call. */
const CALLABLE = [sql`tessera_audit.expire(timestamptz, integer)`, sql`tessera_audit.mark_relocated(uuid)`]

// 0002's objects, restored by down(): bodies as 0002 created them.

const TRIGGER_FUNCTION_0002 = (schema: string) => sql`create or replace function ${sql.id(
  schema,
)}.audit_log_immutable() returns trigger
language plpgsql as $fn$
begin
  if tg_op = 'DELETE' and current_user = 'tessera_audit_owner' then
    return old;
  end if;
  raise exception 'audit_log rows are immutable (% refused)', tg_op using errcode = '42501';
end
$fn$`

const path0002 = (schema: string) => sql`pg_catalog, ${sql.id(schema)}, pg_temp`

const RELOCATE_OUT_0002 = (
  schema: string,
) => sql`create function ${sql.id(schema)}.tessera_audit_relocate_out(
  p_tenant_id uuid)
returns bigint language plpgsql security definer set search_path = ${path0002(schema)} as $fn$
declare
  removed bigint;
begin
  if p_tenant_id is null then
    raise exception 'a tenant id is required' using errcode = '22004';
  end if;
  -- Why: a tenant's audit rows leave a database only with the tenant, after its users have gone
  -- (moved to another database, and removed here in the same transaction).
  if exists (select 1 from users where tenant_id = p_tenant_id) then
    raise exception 'audit rows of tenant % stay while its users are in this database', p_tenant_id
      using errcode = '42501';
  end if;
  delete from audit_log where tenant_id = p_tenant_id;
  get diagnostics removed = row_count;
  return removed;
end
$fn$`

const EXPIRE_0002 = (schema: string) => sql`create function ${sql.id(schema)}.tessera_audit_expire(
  p_before timestamptz, p_limit integer)
returns bigint language plpgsql security definer set search_path = ${path0002(schema)} as $fn$
declare
  removed bigint;
begin
  if p_before is null or p_before > now() - interval '1 day' then
    raise exception 'audit rows of the last day are never removed' using errcode = '22023';
  end if;
  if p_limit is null or p_limit < 1 or p_limit > 10000 then
    raise exception 'between 1 and 10000 rows per call' using errcode = '22023';
  end if;
  delete from audit_log where id in (
    select id from audit_log where created_at < p_before order by created_at limit p_limit);
  get diagnostics removed = row_count;
  return removed;
end
$fn$`

const FUNCTIONS_0002 = (schema: string) => [
  sql`${sql.id(schema)}.tessera_audit_relocate_out(uuid)`,
  sql`${sql.id(schema)}.tessera_audit_expire(timestamptz, integer)`,
]

/** Schema tessera_audit of tessera_audit_owner, holding audit_log and the only ways to remove its rows. */
export const auditSchema: Migration = {
  async up(db: Kysely<unknown>) {
    const who = await whoAmI(db)
    const me = sql.id(who.me)
    const from = sql.id(who.schema)
    // The owner reads nothing of the service's role any more (0002 let it read users.tenant_id).
    await sql`revoke select (tenant_id) on ${from}.users from tessera_audit_owner`.execute(db)
    await asOwner(db, who, async () => {
      // Why as the migrating role: creating a schema needs CREATE on the database, which the owner
      // role lacks, and the right to act as the new owner, which asOwner has just given.
      await sql`create schema tessera_audit authorization tessera_audit_owner`.execute(db)
      // Why as the owner: it owns what moves, and grants are then the owner's.
      await sql`set local role tessera_audit_owner`.execute(db)
      await sql`revoke all on schema tessera_audit from public`.execute(db)
      await sql`alter table ${from}.audit_log set schema tessera_audit`.execute(db)
      // The triggers keep their function (by oid) through the move and the replacement of its body.
      await sql`alter function ${from}.audit_log_immutable() set schema tessera_audit`.execute(db)
      await TRIGGER_FUNCTION.execute(db)
      for (const f of FUNCTIONS_0002(who.schema)) await sql`drop function ${f}`.execute(db)
      await SETTINGS_TABLE.execute(db)
      await sql`insert into tessera_audit.settings (singleton) values (true)`.execute(db)
      await RELOCATIONS_TABLE.execute(db)
      await EXPIRE.execute(db)
      await MARK_RELOCATED.execute(db)
      await SET_RETENTION.execute(db)

      await sql`grant usage on schema tessera_audit to ${me}`.execute(db)
      // audit_log keeps its grants (SELECT and INSERT) through the move.
      await sql`revoke all on tessera_audit.settings, tessera_audit.relocations from public`.execute(db)
      // Why SELECT on both: the service reads the period, and a dump as its role reads every table.
      await sql`grant select on tessera_audit.settings, tessera_audit.relocations to ${me}`.execute(db)
      for (const f of [
        sql`tessera_audit.audit_log_immutable()`,
        sql`tessera_audit.set_retention_days(integer)`,
      ])
        await sql`revoke all on function ${f} from public`.execute(db)
      for (const f of CALLABLE) {
        await sql`revoke all on function ${f} from public`.execute(db)
        await sql`grant execute on function ${f} to ${me}`.execute(db)
      }
      await sql`reset role`.execute(db)
    })
  },

  async down(db: Kysely<unknown>) {
    const who = await whoAmI(db)
    const me = sql.id(who.me)
    const to = sql.id(who.schema)
    await asOwner(db, who, async () => {
      // Why not as the owner for a superuser: asOwner then gives the owner no CREATE on the schema.
      if (!who.superuser) await sql`set local role tessera_audit_owner`.execute(db)
      await sql`alter table tessera_audit.audit_log set schema ${to}`.execute(db)
      await sql`alter function tessera_audit.audit_log_immutable() set schema ${to}`.execute(db)
      await TRIGGER_FUNCTION_0002(who.schema).execute(db)
      await RELOCATE_OUT_0002(who.schema).execute(db)
      await EXPIRE_0002(who.schema).execute(db)
      for (const f of FUNCTIONS_0002(who.schema))
        await sql`alter function ${f} owner to tessera_audit_owner`.execute(db)
      await sql`set local role tessera_audit_owner`.execute(db)
      for (const f of FUNCTIONS_0002(who.schema)) {
        await sql`revoke all on function ${f} from public`.execute(db)
        await sql`grant execute on function ${f} to ${me}`.execute(db)
      }
      await sql`drop schema tessera_audit cascade`.execute(db)
      await sql`reset role`.execute(db)
    })
    await sql`grant select (tenant_id) on ${to}.users to tessera_audit_owner`.execute(db)
  },
}
