import { randomBytes, randomUUID } from 'node:crypto'
import { Migrator, NO_MIGRATIONS, sql, type Kysely } from 'kysely'
import pg from 'pg'
import t from 'tap'
import { openPostgres } from '../../src/db/connect.js'
import type { Database } from '../../src/db/database.js'
import { MIGRATION_LOCK_TABLE, MIGRATION_TABLE, migrateToLatest } from '../../src/db/migrate.js'
import { migrations } from '../../src/db/migrations/index.js'
import { backends, forEachBackend, openTestDatabase, urlWithDatabase, type TapTest } from '../helpers/db.js'
import { assertShadowingRefused, type Admin } from './audit-attacks.js'

async function insertRow(db: Kysely<Database>, tenantId: string, createdAt?: Date): Promise<string> {
  const row = await db
    .insertInto('tessera_audit.audit_log')
    .values({
      tenant_id: tenantId,
      action: 'LOGIN',
      success: false,
      metadata: { reason: 'test' },
      ...(createdAt ? { created_at: createdAt } : {}),
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return row.id
}

async function count(db: Kysely<Database>, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('tessera_audit.audit_log')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** The SQLSTATE a statement fails with, or 'ok'. */
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { code?: string }) => e.code ?? 'no code',
  )

const markRelocated = (db: Kysely<Database>, tenantId: string | null) =>
  sql`select tessera_audit.mark_relocated(${tenantId}::uuid)`.execute(db)

/** tessera_audit.expire(before, limit): the rows it removed. */
const expire = async (db: Kysely<Database>, before: Date | null, limit: number | null) => {
  const { rows } = await sql<{ n: string }>`select tessera_audit.expire(${before}::timestamptz,
    ${limit}::integer) as n`.execute(db)
  return Number(rows[0]?.n)
}

/** Sets the database's retention period (a superuser's or the audit owner's act). */
const setRetention = (db: Kysely<Database>, days: number | null) =>
  sql`select tessera_audit.set_retention_days(${days}::integer)`.execute(db)

const DAY_MS = 86_400_000

t.test('audit_log refuses UPDATE, DELETE and TRUNCATE', (t) =>
  forEachBackend(t, async (t, { db }) => {
    const tenantId = randomUUID()
    const id = await insertRow(db, tenantId)
    t.equal(
      await outcome(
        db.updateTable('tessera_audit.audit_log').set({ success: true }).where('id', '=', id).execute(),
      ),
      '42501',
    )
    t.equal(await outcome(db.deleteFrom('tessera_audit.audit_log').where('id', '=', id).execute()), '42501')
    t.equal(await outcome(sql`truncate tessera_audit.audit_log`.execute(db)), '42501')
    t.equal(await count(db, tenantId), 1, 'the row is still there')
    const row = await db
      .selectFrom('tessera_audit.audit_log')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
    t.equal(row.success, false)
    t.same(row.metadata, { reason: 'test' })
  }),
)

t.test('no session setting opens a way around the trigger (the old relocation switch is gone)', (t) =>
  forEachBackend(t, async (t, { db }) => {
    const tenantId = randomUUID()
    await insertRow(db, tenantId)
    const deleted = db.transaction().execute(async (trx) => {
      await sql`set local tessera.audit_relocation = 'on'`.execute(trx)
      await trx.deleteFrom('tessera_audit.audit_log').where('tenant_id', '=', tenantId).execute()
    })
    t.equal(await outcome(deleted), '42501')
    const truncated = db.transaction().execute(async (trx) => {
      await sql`set local tessera.audit_relocation = 'on'`.execute(trx)
      await sql`truncate tessera_audit.audit_log`.execute(trx)
    })
    t.equal(await outcome(truncated), '42501')
    t.equal(await count(db, tenantId), 1)
  }),
)

t.test('tessera_audit.mark_relocated records a relocation and removes nothing', (t) =>
  forEachBackend(t, async (t, { db }) => {
    const tenantId = randomUUID()
    await insertRow(db, tenantId)
    await insertRow(db, tenantId)
    t.equal(await outcome(markRelocated(db, null)), '22004', 'a tenant id is required')
    await markRelocated(db, tenantId)
    t.equal(await count(db, tenantId), 2, 'the rows stay until retention removes them')
    const { rows } = await sql<{
      tenant_id: string
    }>`select tenant_id from tessera_audit.relocations`.execute(db)
    t.same(rows, [{ tenant_id: tenantId }])
    t.equal(
      await outcome(sql`select tessera_audit_relocate_out(${tenantId}::uuid)`.execute(db)),
      '42883',
      '0002’s function is gone',
    )
  }),
)

t.test(
  'tessera_audit.expire removes rows past the database’s period in bounded batches; none without one',
  (t) =>
    forEachBackend(t, async (t, { db }) => {
      const tenantId = randomUUID()
      const now = Date.now()
      for (const age of [40, 35, 30]) await insertRow(db, tenantId, new Date(now - age * DAY_MS))
      await insertRow(db, tenantId, new Date(now - 3_600_000))
      await insertRow(db, tenantId, new Date(now - 4000 * DAY_MS))

      t.equal(await expire(db, new Date(now - 2 * DAY_MS), 10), 0, 'no period configured: nothing goes')
      t.equal(await count(db, tenantId), 5)

      await setRetention(db, 31)
      t.equal(
        await outcome(expire(db, new Date(now - 10 * DAY_MS), 10)),
        '22023',
        'a cutoff inside the period',
      )
      t.equal(await outcome(expire(db, new Date(now - 30 * DAY_MS), 10)), '22023', 'just inside it')
      t.equal(await outcome(expire(db, null, 10)), '22023')
      t.equal(await outcome(expire(db, new Date(now - 32 * DAY_MS), 0)), '22023', 'a batch of 0')
      t.equal(await outcome(expire(db, new Date(now - 32 * DAY_MS), 10_001)), '22023', 'a batch over 10,000')
      t.equal(await outcome(setRetention(db, 0)), '23514', 'a period of at least a day')
      t.equal(await expire(db, new Date(now - 32 * DAY_MS), 1), 1, 'one row per call')
      t.equal(await expire(db, new Date(now - 32 * DAY_MS), 10), 2, 'the other old ones')
      t.equal(await expire(db, new Date(now - 32 * DAY_MS), 10), 0)
      t.equal(await count(db, tenantId), 2, 'the 30-day-old row and the recent one stay')
    }),
)

/** tessera_audit.expire_from(before, limit, from): the rows it removed and the created_at of the last. */
const expireFrom = async (db: Kysely<Database>, before: Date | null, limit: number, from: Date | null) => {
  const { rows } = await sql<{ removed: string; last: Date | string | null }>`select removed, last
    from tessera_audit.expire_from(${before}::timestamptz, ${limit}::integer, ${from}::timestamptz)`.execute(
    db,
  )
  const row = rows[0]
  return { n: Number(row?.removed), last: row?.last == null ? null : new Date(row.last).getTime() }
}

t.test(
  'tessera_audit.expire_from keeps its place: the oldest from its lower bound, and where the batch ended',
  (t) =>
    forEachBackend(t, async (t, { db }) => {
      const tenantId = randomUUID()
      const now = Date.now()
      const ages = [50, 45, 40, 35]
      for (const age of ages) await insertRow(db, tenantId, new Date(now - age * DAY_MS))
      await insertRow(db, tenantId, new Date(now - 3_600_000))
      const cutoff = new Date(now - 32 * DAY_MS)

      t.same(
        await expireFrom(db, cutoff, 10, null),
        { n: 0, last: null },
        'no period configured: nothing goes',
      )
      await setRetention(db, 31)
      t.equal(
        await outcome(expireFrom(db, new Date(now - 10 * DAY_MS), 10, null)),
        '22023',
        'inside the period',
      )
      t.equal(await outcome(expireFrom(db, null, 10, null)), '22023')
      t.equal(await outcome(expireFrom(db, cutoff, 0, null)), '22023', 'a batch of 0')
      t.equal(await outcome(expireFrom(db, cutoff, 10_001, null)), '22023', 'a batch over 10,000')
      t.equal(
        await outcome(expireFrom(db, cutoff, 10, new Date(now))),
        'ok',
        'a lower bound past the cutoff is allowed',
      )
      const first = await expireFrom(db, cutoff, 2, null)
      t.same(first, { n: 2, last: now - 45 * DAY_MS }, 'the two oldest, and the created_at of the last')
      const later = await expireFrom(db, cutoff, 1, new Date(now - 40 * DAY_MS))
      t.same(later, { n: 1, last: now - 40 * DAY_MS }, 'from its lower bound on')
      t.same(await expireFrom(db, cutoff, 10, new Date(now - 38 * DAY_MS)), { n: 1, last: now - 35 * DAY_MS })
      t.equal(await count(db, tenantId), 1, 'the recent row stays')
    }),
)

t.test('audit rows outlive their tenant', (t) =>
  forEachBackend(t, async (t, { db }) => {
    const tenant = await db
      .insertInto('tenants')
      .values({ code: 'gone', name: 'Gone' })
      .returning('id')
      .executeTakeFirstOrThrow()
    await insertRow(db, tenant.id)
    await db.deleteFrom('tenants').where('id', '=', tenant.id).execute()
    t.equal(await count(db, tenant.id), 1)
  }),
)

t.test('action and actor_type are checked', (t) =>
  forEachBackend(t, async (t, { db }) => {
    const base = { tenant_id: randomUUID(), success: true }
    const bad = { ...base, action: 'NOPE' } as unknown as {
      tenant_id: string
      success: boolean
      action: 'LOGIN'
    }
    t.equal(await outcome(db.insertInto('tessera_audit.audit_log').values(bad).execute()), '23514')
    const actor = { ...base, action: 'LOGIN', actor_type: 'robot' } as unknown as typeof bad
    t.equal(await outcome(db.insertInto('tessera_audit.audit_log').values(actor).execute()), '23514')
  }),
)

// The privilege guard. Tests connect as a superuser, which bypasses privileges; these tests stand in a
// non-superuser LOGIN role with CREATEROLE for the service's role (what a managed PostgreSQL gives),
// have it run the migrations itself, and then try every way around the guard as that role.

const SERVICE_ROLE = 'tessera_test_service'
const SERVICE_PASSWORD = 'tessera-test-service-pw'

/** What the service's role may try first: each is accepted or refused, and changes nothing either way. */
const SETTINGS = [
  sql`set tessera.audit_relocation = 'on'`,
  sql`set session_replication_role = replica`,
  sql`set role tessera_audit_owner`,
  // Accepted with a warning (no privileges were granted): the role holds no grant option.
  sql`grant update, delete, truncate on tessera_audit.audit_log to current_user`,
]

/** Every way to change or remove an audit row the service's role could try. */
const attempts = (tenantId: string) => [
  sql`update tessera_audit.audit_log set success = true where tenant_id = ${tenantId}`,
  sql`delete from tessera_audit.audit_log where tenant_id = ${tenantId}`,
  sql`truncate tessera_audit.audit_log`,
  sql`alter table tessera_audit.audit_log disable trigger audit_log_no_delete`,
  sql`drop trigger audit_log_no_delete on tessera_audit.audit_log`,
  sql`create or replace function tessera_audit.audit_log_immutable() returns trigger language plpgsql
    as $fn$ begin return old; end $fn$`,
  // The period, and the schema the guard lives in.
  sql`update tessera_audit.settings set retention_days = 1`,
  sql`select tessera_audit.set_retention_days(1)`,
  sql`delete from tessera_audit.settings`,
  sql`insert into tessera_audit.settings (singleton, retention_days) values (true, 1)`,
  sql`alter table tessera_audit.settings drop constraint settings_retention_days_check`,
  sql`truncate tessera_audit.relocations`,
  sql`create or replace function tessera_audit.expire(p_before timestamptz, p_limit integer)
    returns bigint language sql as $fn$ select 0::bigint $fn$`,
  sql`create table tessera_audit.shadow (x int)`,
  sql`alter schema tessera_audit rename to tessera_audit_old`,
  sql`drop schema tessera_audit cascade`,
]

/** Runs `fn` on one connection of `open()` and closes it; session settings stay within it. */
async function oneSession(
  open: () => Promise<{ db: Kysely<Database>; close: () => Promise<void> }>,
  fn: (db: Kysely<Database>) => Promise<void>,
): Promise<void> {
  const s = await open()
  try {
    await fn(s.db)
  } finally {
    await s.close()
  }
}

/** The guard, seen from a session of the service's role: nothing changes a row; INSERT and the function work. */
async function assertGuarded(
  t: TapTest,
  session: () => Promise<{ db: Kysely<Database>; close: () => Promise<void> }>,
  settings = SETTINGS,
): Promise<void> {
  const tenantId = randomUUID()
  await oneSession(session, async (db) => {
    await insertRow(db, tenantId)
    await insertRow(db, tenantId)
  })
  // One session per setting: each attempt fails on its own (autocommit), under the setting made first.
  for (const setting of [null, ...settings]) {
    await oneSession(session, async (db) => {
      const set = setting ? await outcome(setting.execute(db)) : 'none'
      for (const attempt of attempts(tenantId)) {
        const name = `${setting?.compile(db).sql ?? 'no setting'} (${set}), then ${attempt.compile(db).sql}`
        t.equal(await outcome(attempt.execute(db)), '42501', name.replace(/\s+/g, ' '))
      }
    })
  }
  await oneSession(session, async (db) => {
    t.equal(await count(db, tenantId), 2, 'both rows unchanged')
    const rows = await db
      .selectFrom('tessera_audit.audit_log')
      .select('success')
      .where('tenant_id', '=', tenantId)
      .execute()
    t.same(
      rows.map((r) => r.success),
      [false, false],
    )
    await markRelocated(db, tenantId)
    t.equal(await count(db, tenantId), 2, 'a relocation mark removes nothing')
  })
}

t.test(
  'PostgreSQL: the service’s own role cannot UPDATE, DELETE or TRUNCATE audit rows, whatever it sets',
  { skip: backends().includes('postgres') ? false : 'TEST_DATABASE_URL is not set' },
  async (t) => {
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL })
    await admin.connect()
    t.teardown(() => admin.end())
    const ident = pg.escapeIdentifier
    // Roles are cluster-wide and outlive this test: created once, tolerating a concurrent creation.
    await admin.query(`do $do$ begin
      create role ${ident(SERVICE_ROLE)} login createrole password '${SERVICE_PASSWORD}';
    exception when duplicate_object or unique_violation then null; end $do$`)
    await admin.query(`do $do$ begin
      create role tessera_audit_owner nologin;
    exception when duplicate_object or unique_violation then null; end $do$`)
    const version = Number((await admin.query('show server_version_num')).rows[0].server_version_num)
    if (version >= 160000) {
      // A CREATEROLE role holds ADMIN only on the roles it created; this one was made by a superuser.
      await admin.query(
        `grant tessera_audit_owner to ${ident(SERVICE_ROLE)} with admin true, inherit false, set false`,
      )
    }
    const name = `tessera_t_${randomBytes(8).toString('hex')}`
    await admin.query(`create database ${ident(name)} owner ${ident(SERVICE_ROLE)}`)
    t.teardown(() => admin.query(`drop database if exists ${ident(name)} with (force)`))
    const url = new URL(urlWithDatabase(name))
    url.username = SERVICE_ROLE
    url.password = SERVICE_PASSWORD

    const service = openPostgres(url.toString(), { poolMax: 1 })
    t.teardown(() => service.close())
    t.same(await migrateToLatest(service.db), Object.keys(migrations), 'it migrates its database')
    const { rows } = await sql<{ superuser: boolean; member: boolean; owner: string }>`
      select r.rolsuper as superuser, pg_has_role(current_user, 'tessera_audit_owner', 'MEMBER') as member,
        pg_get_userbyid(c.relowner) as owner
      from pg_roles r, pg_class c where r.rolname = current_user
        and c.oid = 'tessera_audit.audit_log'::regclass`.execute(service.db)
    t.same(rows[0], { superuser: false, member: version >= 160000, owner: 'tessera_audit_owner' })

    const session = async () => {
      const s = openPostgres(url.toString(), { poolMax: 1 })
      return { db: s.db, close: s.close }
    }
    // Only a real login is refused this: the PGlite test below started its session as a superuser.
    const settings = [...SETTINGS, sql`set session authorization postgres`]
    await assertGuarded(t, session, settings)

    const superuser = new pg.Client({ connectionString: urlWithDatabase(name) })
    await superuser.connect()
    t.teardown(() => superuser.end())
    const asAdmin: Admin = async (query) => {
      const compiled = query.compile(service.db)
      await superuser.query(compiled.sql, [...compiled.parameters])
    }
    await t.test('the second review’s attacks, as the service’s role', (t) =>
      assertShadowingRefused(t, session, asAdmin),
    )

    await t.test('down and up again as the same role', async (t) => {
      const migrator = new Migrator({
        db: service.db,
        provider: { getMigrations: async () => migrations },
        migrationTableName: MIGRATION_TABLE,
        migrationLockTableName: MIGRATION_LOCK_TABLE,
      })
      t.equal((await migrator.migrateTo(NO_MIGRATIONS)).error, undefined)
      t.same(await migrateToLatest(service.db), Object.keys(migrations))
      await assertGuarded(t, session, settings)
    })
  },
)

t.test(
  'PGlite (PostgreSQL 18): a CREATEROLE role that migrates cannot change audit rows either',
  async (t) => {
    // Why on PGlite: its server is PostgreSQL 18, where membership has ADMIN, INHERIT and SET options;
    // SET SESSION AUTHORIZATION makes the one session a non-superuser, as a managed server's role is.
    const tdb = await openTestDatabase('pglite', { empty: true })
    t.teardown(tdb.close)
    await sql`create role ${sql.id(SERVICE_ROLE)} login createrole`.execute(tdb.db)
    // As in docs/security.md's recipe, the service's role owns its database (0008 creates a schema there) and
    // the database's public schema.
    const { rows: here } = await sql<{ name: string }>`select current_database() as name`.execute(tdb.db)
    await sql`alter database ${sql.id(here[0]?.name ?? 'postgres')} owner to ${sql.id(SERVICE_ROLE)}`.execute(
      tdb.db,
    )
    await sql`alter schema public owner to ${sql.id(SERVICE_ROLE)}`.execute(tdb.db)
    await sql`set session authorization ${sql.id(SERVICE_ROLE)}`.execute(tdb.db)
    t.same(await migrateToLatest(tdb.db), Object.keys(migrations))
    const { rows } = await sql<{ set: boolean; usage: boolean }>`
      select pg_has_role(current_user, 'tessera_audit_owner', 'SET') as set,
        pg_has_role(current_user, 'tessera_audit_owner', 'USAGE') as usage`.execute(tdb.db)
    t.same(rows[0], { set: false, usage: false }, 'left with the ADMIN option only')
    // One session: a setting an attempt made is reset before the next one.
    const session = async () => ({
      db: tdb.db,
      close: async () => {
        await sql`reset role`.execute(tdb.db).catch(() => undefined)
        await sql`reset all`.execute(tdb.db)
        await sql`set session authorization ${sql.id(SERVICE_ROLE)}`.execute(tdb.db)
      },
    })
    await assertGuarded(t, session)
    const asAdmin: Admin = async (query) => {
      // Why not RESET: PGlite's RESET SESSION AUTHORIZATION keeps the current role.
      await sql`set session authorization postgres`.execute(tdb.db)
      try {
        await query.execute(tdb.db)
      } finally {
        await sql`set session authorization ${sql.id(SERVICE_ROLE)}`.execute(tdb.db)
      }
    }
    await t.test('the second review’s attacks, as the service’s role', (t) =>
      assertShadowingRefused(t, session, asAdmin),
    )
  },
)
