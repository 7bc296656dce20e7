import { sql, type Kysely, type Migration, type RawBuilder } from 'kysely'

// Audit immutability by privilege, and request correlation (docs/decisions.md D7).
//
// Until now the service's role owned audit_log, and the trigger let any transaction that had set
// tessera.audit_relocation = 'on' delete rows: a switch every statement of the service could flip.
// From here on a NOLOGIN role, tessera_audit_owner, owns audit_log, its trigger function and the two
// SECURITY DEFINER functions that are the only ways to remove rows (a tenant's rows when it moves out,
// and retention); the migrating role, which is the service's, keeps SELECT and INSERT only. The
// trigger refuses UPDATE and TRUNCATE always, and DELETE unless it runs as tessera_audit_owner, which
// only those functions (or a superuser) do.
//
// Roles are cluster-wide: every Tessera database on a server (tests create hundreds, routed tenants a
// few) shares the one owner role. PGlite has one role, a superuser, which bypasses privileges: there the
// same objects exist, the trigger is the guard, and relocation runs through the same functions.
//
// A migration is frozen once released: names and bodies are spelled out here.

/** Migrating role, whether it is a superuser, the schema of the tables, and the server's major version. */
export interface Who {
  readonly me: string
  readonly superuser: boolean
  readonly schema: string
  readonly version: number
}

export async function whoAmI(db: Kysely<unknown>): Promise<Who> {
  const { rows } = await sql<{ me: string; superuser: boolean; schema: string; version: string }>`
    select current_user as me, r.rolsuper as superuser, current_schema() as schema,
      current_setting('server_version_num') as version
    from pg_roles r where r.rolname = current_user`.execute(db)
  const row = rows[0]
  if (!row) throw new Error('the migrating role is missing from pg_roles')
  return { me: row.me, superuser: row.superuser, schema: row.schema, version: Number(row.version) }
}

/** Creates the owner role unless it exists; another database's migration may be creating it right now. */
async function ensureOwnerRole(db: Kysely<unknown>): Promise<void> {
  // Why both codes: 42710 when the other creation has committed, 23505 when it commits while we wait.
  await sql`do $do$
begin
  if not exists (select 1 from pg_roles where rolname = 'tessera_audit_owner') then
    begin
      create role tessera_audit_owner nologin;
    exception when duplicate_object or unique_violation then
      null;
    end;
  end if;
end
$do$`.execute(db)
}

/**
 * Whether the migrating role can SET ROLE to the owner role (`set`, what changing an owner needs), or
 * act as it in any way (`any`: SET ROLE, or use its privileges through inheritance).
 */
async function canActAsOwner(db: Kysely<unknown>, who: Who, how: 'set' | 'any'): Promise<boolean> {
  // Why by version: PostgreSQL 16 split membership into ADMIN, INHERIT and SET; a CREATEROLE role holds
  // ADMIN on the roles it creates, a membership ('MEMBER') that grants neither of the others.
  const has = async (privilege: 'MEMBER' | 'SET' | 'USAGE') => {
    const { rows } = await sql<{ can: boolean }>`select
      pg_has_role(current_user, 'tessera_audit_owner', ${privilege}) as can`.execute(db)
    const row = rows[0]
    if (!row) throw new Error('pg_has_role returned no row')
    return row.can
  }
  if (who.version < 160000) return has('MEMBER')
  return (await has('SET')) || (how === 'any' && (await has('USAGE')))
}

/**
 * Runs `fn` with the migrating role able to act as tessera_audit_owner (a superuser always is), then
 * takes that ability away again. Refuses to finish while the migrating role could still act as the
 * owner: the guarantee is that the service's role cannot, whatever it sets.
 */
export async function asOwner(db: Kysely<unknown>, who: Who, fn: () => Promise<void>): Promise<void> {
  if (who.superuser) return fn()
  const me = sql.id(who.me)
  const schema = sql.id(who.schema)
  if (!(await canActAsOwner(db, who, 'set'))) {
    try {
      // PostgreSQL 15 and older: CREATEROLE may grant any non-superuser role. 16 and later: the ADMIN
      // option, which a CREATEROLE role holds on the roles it created.
      await sql`grant tessera_audit_owner to ${me}`.execute(db)
    } catch (err) {
      throw new Error(
        `${who.me} cannot act as tessera_audit_owner: give it CREATEROLE for this migration, or have an ` +
          `administrator create the role and grant it the ADMIN option on it (see docs/security.md, "Audit immutability")`,
        { cause: err },
      )
    }
  }
  // Why: changing an owner is allowed only when the new owner could have created the object itself.
  const { rows } = await sql<{
    usage: boolean
    create: boolean
  }>`select has_schema_privilege('tessera_audit_owner', ${who.schema}, 'USAGE') as usage,
      has_schema_privilege('tessera_audit_owner', ${who.schema}, 'CREATE') as create`.execute(db)
  const owner = rows[0]
  if (!owner) throw new Error('has_schema_privilege returned no row')
  if (!owner.usage) await sql`grant usage on schema ${schema} to tessera_audit_owner`.execute(db)
  if (!owner.create) await sql`grant create on schema ${schema} to tessera_audit_owner`.execute(db)
  await fn()
  if (!owner.create) await sql`revoke create on schema ${schema} from tessera_audit_owner`.execute(db)
  // Drops our own grant, and one an administrator made for the migration if we hold the ADMIN option.
  await sql`do $do$
begin
  revoke tessera_audit_owner from current_user;
exception when insufficient_privilege then
  null;
end
$do$`.execute(db)
  if (await canActAsOwner(db, who, 'any')) {
    throw new Error(
      `${who.me} can still act as tessera_audit_owner, so it could delete audit rows: revoke that ` +
        `membership (keep at most the ADMIN option) and run the migrations again`,
    )
  }
}

/** The trigger: UPDATE and TRUNCATE never; DELETE only as tessera_audit_owner (the removal functions). */
const TRIGGER_FUNCTION = sql`create or replace function audit_log_immutable() returns trigger
language plpgsql as $fn$
begin
  if tg_op = 'DELETE' and current_user = 'tessera_audit_owner' then
    return old;
  end if;
  raise exception 'audit_log rows are immutable (% refused)', tg_op using errcode = '42501';
end
$fn$`

/** 0001's trigger function, restored by down(). */
const TRIGGER_FUNCTION_0001 = sql`create or replace function audit_log_immutable() returns trigger
language plpgsql as $fn$
begin
  if tg_op = 'DELETE' and coalesce(current_setting('tessera.audit_relocation', true), '') = 'on' then
    return old;
  end if;
  raise exception 'audit_log rows are immutable (% refused)', tg_op using errcode = '42501';
end
$fn$`

// Why a fixed search_path with pg_temp last: a SECURITY DEFINER function must not resolve a table or an
// operator through a schema its caller controls (pg_temp is searched first unless it is named).
const searchPath = (who: Who): RawBuilder<unknown> => sql`pg_catalog, ${sql.id(who.schema)}, pg_temp`

/** Removes every audit row of one tenant, once none of its users is left in this database. */
const relocateOut = (who: Who) => sql`create function tessera_audit_relocate_out(p_tenant_id uuid)
returns bigint language plpgsql security definer set search_path = ${searchPath(who)} as $fn$
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

/** Retention (docs/decisions.md D8): at most p_limit rows older than p_before, never one of the last day. */
const expire = (who: Who) => sql`create function tessera_audit_expire(p_before timestamptz, p_limit integer)
returns bigint language plpgsql security definer set search_path = ${searchPath(who)} as $fn$
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

const FUNCTIONS = [
  sql`tessera_audit_relocate_out(uuid)`,
  sql`tessera_audit_expire(timestamptz, integer)`,
] as const

/** tessera_audit_owner owns audit_log and the functions; the service's role may read, insert and call. */
export const auditGuard: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table audit_log add column request_id text`.execute(db)
    await sql`alter table client_key_usage add column request_id text`.execute(db)

    await ensureOwnerRole(db)
    const who = await whoAmI(db)
    const me = sql.id(who.me)
    await TRIGGER_FUNCTION.execute(db)
    await relocateOut(who).execute(db)
    await expire(who).execute(db)
    // The only thing the owner reads outside its table: whether a tenant still has users here.
    await sql`grant select (tenant_id) on users to tessera_audit_owner`.execute(db)

    await asOwner(db, who, async () => {
      await sql`alter table audit_log owner to tessera_audit_owner`.execute(db)
      await sql`alter function audit_log_immutable() owner to tessera_audit_owner`.execute(db)
      for (const f of FUNCTIONS) await sql`alter function ${f} owner to tessera_audit_owner`.execute(db)
      // Why as the owner: grants are then the owner's, and need no INHERIT from the migrating role.
      await sql`set local role tessera_audit_owner`.execute(db)
      await sql`revoke all on audit_log from public`.execute(db)
      await sql`revoke update, delete, truncate, references, trigger on audit_log from ${me}`.execute(db)
      await sql`grant select, insert on audit_log to ${me}`.execute(db)
      for (const f of FUNCTIONS) {
        await sql`revoke all on function ${f} from public`.execute(db)
        await sql`grant execute on function ${f} to ${me}`.execute(db)
      }
      await sql`reset role`.execute(db)
    })
  },

  async down(db: Kysely<unknown>) {
    const who = await whoAmI(db)
    const me = sql.id(who.me)
    await asOwner(db, who, async () => {
      await sql`alter table audit_log owner to ${me}`.execute(db)
      await sql`alter function audit_log_immutable() owner to ${me}`.execute(db)
      for (const f of FUNCTIONS) await sql`alter function ${f} owner to ${me}`.execute(db)
    })
    for (const f of FUNCTIONS) await sql`drop function ${f}`.execute(db)
    await sql`revoke select (tenant_id) on users from tessera_audit_owner`.execute(db)
    await TRIGGER_FUNCTION_0001.execute(db)
    await sql`alter table client_key_usage drop column request_id`.execute(db)
    await sql`alter table audit_log drop column request_id`.execute(db)
    // The role stays: it is cluster-wide, and other databases' tables may belong to it.
  },
}
