import { randomUUID } from 'node:crypto'
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from '../../src/db/database.js'
import type { TapTest } from '../helpers/db.js'

// The second review's attacks on the audit log (issue 25 row 1, contract section 22), as the service's
// own non-superuser role: shadowing what the removal functions read or resolve, row-level-security
// policies that call the role's own function, and the retention period. Used by test/db/audit-log.test.ts
// on PostgreSQL and on PGlite (PostgreSQL 18).

/** A session of the service's role (settings and temporary objects last until close). */
export type Session = () => Promise<{ db: Kysely<Database>; close: () => Promise<void> }>

/** Runs SQL as a superuser on the same database: what an operator or the test harness may do. */
export type Admin = (query: RawBuilder<unknown>) => Promise<void>

const DAY_MS = 86_400_000
/** The period the operator configures before the attacks. */
const PERIOD_DAYS = 30

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { code?: string }) => e.code ?? 'no code',
  )

async function within(session: Session, fn: (db: Kysely<Database>) => Promise<void>): Promise<void> {
  const s = await session()
  try {
    await fn(s.db)
  } finally {
    await s.close()
  }
}

/** Runs each statement, whatever it answers: an attacker's preparation, accepted or not. */
async function tryAll(db: Kysely<Database>, statements: RawBuilder<unknown>[]): Promise<void> {
  for (const s of statements) await outcome(s.execute(db))
}

/** The calls an attacker makes once it has prepared: every removal function, with a short cutoff. */
const removals = (tenantId: string) => [
  sql`select tessera_audit.expire(now() - interval '2 days', 10000)`,
  sql`select tessera_audit.expire(now() - interval '2 days', 10000) from users`,
  sql`select * from tessera_audit.expire_from(now() - interval '2 days', 10000, null)`,
  // A cutoff before every row of the test: the call removes nothing, but runs its whole body.
  sql`select * from tessera_audit.expire_from(now() - interval '45 days', 10, null)`,
  sql`select tessera_audit.mark_relocated(${tenantId}::pg_catalog.uuid)`,
  sql`select tessera_audit_relocate_out(${tenantId}::pg_catalog.uuid)`,
  sql`select tessera_audit_expire(now() - interval '2 days', 10000)`,
]

/** A function of the service's role that, run as the audit owner, would open the table to it. */
const evilFunction = (role: string) => sql`create or replace function public.tessera_evil() returns boolean
language plpgsql as $fn$
begin
  begin
    execute ${sql.lit(`grant update, delete, truncate on tessera_audit.audit_log to "${role}"`)};
  exception when others then null;
  end;
  begin
    execute 'alter table tessera_audit.audit_log disable trigger user';
  exception when others then null;
  end;
  begin
    execute 'update tessera_audit.settings set retention_days = 1';
  exception when others then null;
  end;
  -- False: the row is hidden, so 0002's function found no user of the tenant left and went on.
  return false;
end
$fn$`

/** Policies calling that function on every table the role owns or can make with the owner's names. */
const policies = [
  sql`alter table users enable row level security`,
  sql`alter table users force row level security`,
  sql`create policy tessera_evil on users using (public.tessera_evil())`,
  sql`create table public.settings (singleton boolean, retention_days integer)`,
  sql`create table public.relocations (tenant_id uuid)`,
  sql`create table public.audit_log (id uuid, tenant_id uuid, created_at timestamptz)`,
  ...['settings', 'relocations', 'audit_log'].flatMap((t) => [
    sql`alter table ${sql.table(`public.${t}`)} enable row level security`,
    sql`alter table ${sql.table(`public.${t}`)} force row level security`,
    sql`create policy tessera_evil on ${sql.table(`public.${t}`)} using (public.tessera_evil())`,
  ]),
]

/** Look-alikes: `users` renamed and recreated empty, and the owner's table names in public and pg_temp. */
const lookAlikes = [
  sql`alter table users rename to users_real`,
  sql`create table users (id uuid, tenant_id uuid)`,
  sql`grant select on users to tessera_audit_owner`,
  sql`create table public.settings (singleton boolean, retention_days integer)`,
  sql`insert into public.settings values (true, 1)`,
  sql`create table public.relocations (tenant_id uuid)`,
  sql`create temp table settings (singleton boolean, retention_days integer)`,
  sql`insert into pg_temp.settings values (true, 1)`,
  sql`create temp table audit_log (id uuid, tenant_id uuid, created_at timestamptz)`,
  sql`create temp table relocations (tenant_id uuid)`,
]
const undoLookAlikes = [
  sql`drop table users`,
  sql`alter table users_real rename to users`,
  sql`drop table if exists public.settings, public.relocations, public.audit_log`,
  sql`drop table if exists pg_temp.settings, pg_temp.audit_log, pg_temp.relocations`,
]

/**
 * Functions, operators and types earlier on the path: in public (with the session's path putting public
 * before pg_catalog) and in pg_temp (searched first for relations and types when a path omits it).
 */
const shadows = [
  sql`create function public.now() returns timestamptz language sql as $$ select 'infinity'::timestamptz $$`,
  sql`create function public.make_interval(days integer) returns interval language sql
    as $$ select interval '0' $$`,
  sql`create function public.tessera_true(timestamptz, timestamptz) returns boolean language sql
    as $$ select true $$`,
  sql`create function public.tessera_false(timestamptz, timestamptz) returns boolean language sql
    as $$ select false $$`,
  sql`create function public.tessera_true(uuid, uuid) returns boolean language sql as $$ select true $$`,
  sql`create function public.tessera_true(name, name) returns boolean language sql as $$ select true $$`,
  sql`create function public.tessera_true(text, text) returns boolean language sql as $$ select true $$`,
  sql`create operator public.< (leftarg = timestamptz, rightarg = timestamptz, function = public.tessera_true)`,
  sql`create operator public.> (leftarg = timestamptz, rightarg = timestamptz, function = public.tessera_false)`,
  sql`create operator public.= (leftarg = uuid, rightarg = uuid, function = public.tessera_true)`,
  sql`create operator public.= (leftarg = name, rightarg = name, function = public.tessera_true)`,
  sql`create operator public.= (leftarg = text, rightarg = text, function = public.tessera_true)`,
  sql`create function pg_temp.now() returns timestamptz language sql as $$ select 'infinity'::timestamptz $$`,
  sql`create temp table uuid (x int)`,
  sql`create temp table timestamptz (x int)`,
  sql`create temp table text (x int)`,
  sql`set search_path = public, pg_catalog`,
]
/** Why: PGlite's test has one session, where temporary types would shadow the test's own casts. */
const undoShadows = [
  sql`reset search_path`,
  sql`drop table if exists pg_temp.uuid, pg_temp.timestamptz, pg_temp.text`,
  sql`drop function if exists pg_temp.now()`,
  sql`drop function if exists public.now(), public.make_interval(integer)`,
  sql`drop function if exists public.tessera_true(timestamptz, timestamptz), public.tessera_false(timestamptz,
    timestamptz), public.tessera_true(uuid, uuid), public.tessera_true(name, name),
    public.tessera_true(text, text) cascade`,
]

/** The guard after an attack: UPDATE, DELETE and TRUNCATE fail, nothing opened up, no recent row gone. */
async function assertStillGuarded(
  t: TapTest,
  session: Session,
  s: { role: string; tenantId: string; recent: number; name: string },
): Promise<void> {
  await within(session, async (db) => {
    for (const stmt of [
      sql`update tessera_audit.audit_log set success = true where tenant_id = ${s.tenantId}`,
      sql`delete from tessera_audit.audit_log where tenant_id = ${s.tenantId}`,
      sql`truncate tessera_audit.audit_log`,
    ]) {
      t.equal(await outcome(stmt.execute(db)), '42501', `${s.name}: ${stmt.compile(db).sql.split(' ')[0]}`)
    }
    const { rows } = await sql<{ recent: string; del: boolean; upd: boolean; trn: boolean; off: string }>`
      select (select count(*) from tessera_audit.audit_log where tenant_id = ${s.tenantId}
          and created_at > now() - interval '1 day') as recent,
        has_table_privilege(${s.role}, 'tessera_audit.audit_log', 'DELETE') as del,
        has_table_privilege(${s.role}, 'tessera_audit.audit_log', 'UPDATE') as upd,
        has_table_privilege(${s.role}, 'tessera_audit.audit_log', 'TRUNCATE') as trn,
        (select count(*) from pg_trigger where tgrelid = 'tessera_audit.audit_log'::regclass
          and not tgisinternal and tgenabled <> 'O') as off`.execute(db)
    t.same(
      { ...rows[0], recent: Number(rows[0]?.recent), off: Number(rows[0]?.off) },
      { recent: s.recent, del: false, upd: false, trn: false, off: 0 },
      `${s.name}: no recent row gone, no privilege granted, every trigger on`,
    )
    const period = await sql<{ days: number | null }>`select retention_days as days
      from tessera_audit.settings`.execute(db)
    t.equal(period.rows[0]?.days, PERIOD_DAYS, `${s.name}: the period is unchanged`)
  })
}

/**
 * Every attack of the second review, each from a fresh session of the service's role, with the period
 * set to 30 days by `admin`; an old row shows the legitimate removal still works at the end.
 */
export async function assertShadowingRefused(t: TapTest, session: Session, admin: Admin): Promise<void> {
  const tenantId = randomUUID()
  const recent = 3
  let role = ''
  await within(session, async (db) => {
    role = (await sql<{ me: string }>`select current_user as me`.execute(db)).rows[0]?.me ?? ''
    for (let i = 0; i < recent; i++) {
      await db
        .insertInto('tessera_audit.audit_log')
        .values({ tenant_id: tenantId, action: 'LOGIN', success: true, metadata: {} })
        .execute()
    }
    await db
      .insertInto('tessera_audit.audit_log')
      .values({
        tenant_id: tenantId,
        action: 'LOGIN',
        success: true,
        metadata: {},
        created_at: new Date(Date.now() - 40 * DAY_MS),
      })
      .execute()
  })
  const s = { role, tenantId, recent }

  await t.test('expire with no period configured removes nothing', async (t) => {
    await admin(sql`select tessera_audit.set_retention_days(null)`)
    await within(session, async (db) => {
      const { rows } = await sql<{ n: string }>`select tessera_audit.expire(now() - interval '2 days', 10000)
        as n`.execute(db)
      t.equal(Number(rows[0]?.n), 0)
    })
    await admin(sql`select tessera_audit.set_retention_days(${PERIOD_DAYS}::integer)`)
    await assertStillGuarded(t, session, { ...s, name: 'no period' })
  })

  await t.test('expire with a cutoff inside the period is refused', async (t) => {
    await within(session, async (db) => {
      for (const days of [0, 2, PERIOD_DAYS - 1]) {
        const cut = sql`select tessera_audit.expire(now() - make_interval(days => ${days}::integer), 10000)`
        t.equal(await outcome(cut.execute(db)), '22023', `${days} days ago`)
      }
      t.equal(await outcome(sql`select tessera_audit.expire('infinity', 10000)`.execute(db)), '22023')
    })
    await assertStillGuarded(t, session, { ...s, name: 'cutoff inside the period' })
  })

  await t.test('the service’s role cannot change the period', async (t) => {
    await within(session, async (db) => {
      for (const stmt of [
        sql`update tessera_audit.settings set retention_days = 1`,
        sql`select tessera_audit.set_retention_days(1)`,
        sql`delete from tessera_audit.settings`,
        sql`insert into tessera_audit.settings (singleton, retention_days) values (false, 1)`,
        sql`alter table tessera_audit.settings disable row level security`,
        sql`create or replace function tessera_audit.set_retention_days(p_days integer) returns void
          language sql as $fn$ select $fn$`,
      ])
        t.equal(await outcome(stmt.execute(db)), '42501', stmt.compile(db).sql.split('\n')[0] ?? '')
    })
    await assertStillGuarded(t, session, { ...s, name: 'changing the period' })
  })

  await t.test('renaming a table the functions read and creating a look-alike', async (t) => {
    await within(session, async (db) => {
      await tryAll(db, lookAlikes)
      for (const stmt of removals(tenantId)) await outcome(stmt.execute(db))
      await tryAll(db, undoLookAlikes)
    })
    await assertStillGuarded(t, session, { ...s, name: 'look-alikes' })
  })

  await t.test('a row-level-security policy that calls the role’s own function', async (t) => {
    await within(session, async (db) => {
      // A tenant with a user: the policy runs only on a row it is asked about.
      const tenant = await db
        .insertInto('tenants')
        .values({ code: `evil-${tenantId.slice(0, 8)}`, name: 'Evil' })
        .returning('id')
        .executeTakeFirstOrThrow()
      await db
        .insertInto('users')
        .values({ tenant_id: tenant.id, email: 'evil@x.test', password_hash: 'h' })
        .execute()
      await tryAll(db, [evilFunction(role), ...policies])
      for (const stmt of [...removals(tenantId), ...removals(tenant.id)]) await outcome(stmt.execute(db))
      await tryAll(db, [
        sql`drop policy if exists tessera_evil on users`,
        sql`alter table users no force row level security`,
        sql`alter table users disable row level security`,
        sql`drop table if exists public.settings, public.relocations, public.audit_log`,
      ])
    })
    await assertStillGuarded(t, session, { ...s, name: 'policies' })
  })

  await t.test('a function, an operator or a type earlier on the path', async (t) => {
    await within(session, async (db) => {
      await tryAll(db, shadows)
      for (const stmt of removals(tenantId)) await outcome(stmt.execute(db))
      // The trigger runs as the caller, on the caller's path: DELETE still refused.
      t.equal(
        await outcome(sql`delete from tessera_audit.audit_log where tenant_id = ${tenantId}`.execute(db)),
        '42501',
      )
      await tryAll(db, undoShadows)
    })
    await assertStillGuarded(t, session, { ...s, name: 'shadows' })
  })

  await t.test(
    'a temporary domain named like a type the functions cast to, whose check runs the role’s function',
    async (t) => {
      // Why domains: pg_temp is searched first for types, and a domain's CHECK would run as the owner. Why one
      // at a time: with several, the function's own literals reach another domain and the call only recurses.
      for (const d of ['timestamptz', 'int4', 'int8', 'uuid', 'text', 'bool', 'name', 'interval']) {
        // One connection: a temporary type exists only in the session that made it.
        await within(session, (pool) =>
          pool.connection().execute(async (db) => {
            await tryAll(db, [
              evilFunction(role),
              sql`create domain pg_temp.${sql.id(d)} as pg_catalog.${sql.id(d)} check (public.tessera_evil() is not null)`,
            ])
            for (const stmt of removals(tenantId)) await outcome(stmt.execute(db))
            await tryAll(db, [sql`drop domain if exists pg_temp.${sql.id(d)}`])
          }),
        )
        await assertStillGuarded(t, session, { ...s, name: `a domain named ${d}` })
      }
    },
  )

  await t.test('past every attack, retention still removes what is old, and only that', async (t) => {
    await within(session, async (db) => {
      const { rows } = await sql<{ n: string }>`select tessera_audit.expire(now() - interval '31 days', 10000)
        as n`.execute(db)
      t.equal(Number(rows[0]?.n), 1, 'the 40-day-old row')
    })
    await assertStillGuarded(t, session, { ...s, name: 'retention' })
  })
}
