import { sql, type Kysely, type Migration } from 'kysely'
import { asOwner, whoAmI } from './0002_audit_guard.js'

// Retention that keeps its place (issue 45): tessera_audit.expire_from is tessera_audit.expire with a
// lower bound, and it answers where its batch ended. Why: each batch of the ordered sweep began at the
// oldest entry of the created_at index, and walked every entry the batches before it had deleted (dead
// until a vacuum) before it found a live row: a backlog's sweep slowed with every batch. Each batch now
// starts where the last one ended. The same checks as expire: at most 10,000 rows, never a row inside the
// configured period. Every type its body names is schema-qualified, as 0008's are: pg_temp is searched
// first for types, so a temporary domain named `timestamptz` with a CHECK of the caller's would otherwise
// run as the owner. Frozen once released.

const PATH = sql.raw('pg_catalog, tessera_audit')

const EXPIRE_FROM = sql`create function tessera_audit.expire_from(p_before timestamptz, p_limit integer,
  p_from timestamptz) returns table (removed bigint, last timestamptz)
language plpgsql security definer set search_path = ${PATH} as $fn$
declare
  v_days pg_catalog.int4;
begin
  if p_limit is null or p_limit operator(pg_catalog.<) 1 or p_limit operator(pg_catalog.>) 10000 then
    raise exception 'between 1 and 10000 rows per call' using errcode = '22023';
  end if;
  select s.retention_days into v_days from tessera_audit.settings s;
  if v_days is null then
    -- No period configured for this database: every row is kept.
    return query select 0::pg_catalog.int8, null::pg_catalog.timestamptz;
    return;
  end if;
  if p_before is null or p_before operator(pg_catalog.>)
      (pg_catalog.now() operator(pg_catalog.-) pg_catalog.make_interval(days => v_days)) then
    raise exception 'audit rows of the last % days are kept (tessera_audit.settings)', v_days
      using errcode = '22023';
  end if;
  -- Why coalesce and not "p_from is null or": a bound the index scan can start from in the cached plan.
  return query with gone as (
    delete from tessera_audit.audit_log a where a.id operator(pg_catalog.=) any (array(
      select o.id from tessera_audit.audit_log o
      where o.created_at operator(pg_catalog.<) p_before
        and o.created_at operator(pg_catalog.>=) coalesce(p_from, '-infinity'::pg_catalog.timestamptz)
      order by o.created_at limit p_limit))
    returning a.created_at)
  select pg_catalog.count(*), pg_catalog.max(gone.created_at) from gone;
end
$fn$`

export const auditExpireFrom: Migration = {
  async up(db: Kysely<unknown>) {
    const who = await whoAmI(db)
    const me = sql.id(who.me)
    await asOwner(db, who, async () => {
      // Why as the owner, a superuser too: the function runs as its owner, and the trigger lets only
      // tessera_audit_owner delete.
      await sql`set local role tessera_audit_owner`.execute(db)
      await EXPIRE_FROM.execute(db)
      const f = sql`tessera_audit.expire_from(timestamptz, integer, timestamptz)`
      await sql`revoke all on function ${f} from public`.execute(db)
      await sql`grant execute on function ${f} to ${me}`.execute(db)
      await sql`reset role`.execute(db)
    })
  },

  async down(db: Kysely<unknown>) {
    const who = await whoAmI(db)
    await asOwner(db, who, async () => {
      await sql`set local role tessera_audit_owner`.execute(db)
      await sql`drop function tessera_audit.expire_from(timestamptz, integer, timestamptz)`.execute(db)
      await sql`reset role`.execute(db)
    })
  },
}
