import { randomUUID } from 'node:crypto'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, sql } from 'kysely'
import t from 'tap'
import { isDatabaseUnavailable } from '../../src/db/connect.js'
import { jsonb, type Database } from '../../src/db/database.js'
import { preparePgParam } from '../../src/db/pg-params.js'
import { PGliteBusyError, PGliteDialect } from '../../src/db/pglite-dialect.js'
import { forEachBackend, openTestDatabase } from '../helpers/db.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function tenant(db: Kysely<Database>) {
  return db
    .insertInto('tenants')
    .values({ code: `t-${randomUUID().slice(0, 8)}`, name: 'T' })
    .returning('id')
    .executeTakeFirstOrThrow()
}

t.test('parameters round-trip the same way on PGlite and PostgreSQL', (t) =>
  forEachBackend(t, async (t, { db }) => {
    const { id } = await tenant(db)
    const config = { passwordPolicy: { minLength: 12 }, loginIdentifiers: ['email', 'username'], n: null }
    const expires = new Date('2031-05-06T07:08:09.123Z')
    await db.updateTable('tenants').set({ auth_config: config }).where('id', '=', id).execute()
    const key = await db
      .insertInto('client_keys')
      .values({
        tenant_id: id,
        name: 'k',
        prefix: 'ck_abc',
        key_hash: randomUUID(),
        scopes: jsonb(['users:read', 'roles:*']),
        ip_allowlist: jsonb(['10.0.0.0/8', '::1/128']),
        expires_at: expires,
      })
      .returning(['scopes', 'ip_allowlist', 'origin_allowlist', 'expires_at', 'created_at'])
      .executeTakeFirstOrThrow()
    t.same(key.scopes, ['users:read', 'roles:*'])
    t.same(key.ip_allowlist, ['10.0.0.0/8', '::1/128'])
    t.same(key.origin_allowlist, [])
    t.type(key.expires_at, Date)
    t.equal(key.expires_at?.toISOString(), expires.toISOString())
    t.type(key.created_at, Date)

    const row = await db
      .selectFrom('tenants')
      .select('auth_config')
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
    t.same(row.auth_config, config, 'a jsonb object goes in as an object and comes back equal')

    const { rows } = await sql<{ arr: (string | null)[]; n: number; big: number; ok: boolean; num: string }>`
      select ${['a', 'b,c', 'q"w', 'back\\slash', null, '']}::text[] as arr,
             (select count(*) from tenants) as n, ${12345678901}::int8 as big, ${true}::boolean as ok,
             ${'1.50'}::numeric as num`.execute(db)
    t.same(rows[0]?.arr, ['a', 'b,c', 'q"w', 'back\\slash', null, ''], 'text[] round trip')
    t.equal(rows[0]?.n, 1, 'count(*) is a number')
    t.equal(rows[0]?.big, 12345678901)
    t.equal(rows[0]?.ok, true)
    t.equal(rows[0]?.num, '1.50', 'numeric stays a string')

    const changed = await db.updateTable('tenants').set({ name: 'U' }).where('id', '=', id).executeTakeFirst()
    t.equal(changed.numUpdatedRows, 1n)
    const selected = await db.selectFrom('tenants').select('id').execute()
    t.equal(selected.length, 1)
  }),
)

t.test('a JS array for a jsonb column fails on both back-ends, as it does through pg', (t) =>
  forEachBackend(t, async (t, { db }) => {
    const { id } = await tenant(db)
    const asArray = { ip_allowlist: ['10.0.0.0/8'] } as unknown as { ip_allowlist: string }
    const err = await db
      .updateTable('client_keys')
      .set(asArray)
      .where('tenant_id', '=', id)
      .execute()
      .then(
        () => null,
        (e: { code?: string }) => e,
      )
    t.equal(err?.code, '22P02', 'invalid input syntax for type json')
  }),
)

t.test('preparePgParam mirrors pg', async (t) => {
  t.equal(preparePgParam(null), null)
  t.equal(preparePgParam(undefined), null)
  t.equal(preparePgParam(12), '12')
  t.equal(preparePgParam(10n), '10')
  t.equal(preparePgParam(false), 'false')
  t.equal(preparePgParam(new Date('2020-01-02T03:04:05.678Z')), '2020-01-02T03:04:05.678Z')
  t.equal(preparePgParam({ a: [1, 'x'] }), '{"a":[1,"x"]}')
  t.equal(preparePgParam(['a', null, ['b"']]), '{"a",NULL,{"b\\""}}')
  t.equal(preparePgParam([new Date(0)]), '{"1970-01-01T00:00:00.000Z"}')
  t.equal(preparePgParam([{ k: 1 }]), '{"{\\"k\\":1}"}')
  t.same(preparePgParam(Buffer.from('hi')), new Uint8Array([104, 105]))
  t.equal(preparePgParam({ toPostgres: () => 'custom' }), 'custom')
})

t.test('two concurrent transactions on PGlite do not interleave', async (t) => {
  const { db, close } = await openTestDatabase('pglite')
  t.teardown(close)
  const events: string[] = []
  const run = (name: string) =>
    db.transaction().execute(async (trx) => {
      events.push(`${name}:begin`)
      await trx.insertInto('service_settings').values({ key: name, value: '1' }).execute()
      await sleep(50)
      events.push(`${name}:commit`)
    })
  // A plain query issued while A holds the connection waits for A's commit, and sees its row.
  const [, , seen] = await Promise.all([
    run('a'),
    run('b'),
    (async () => {
      await sleep(10)
      const rows = await db.selectFrom('service_settings').select('key').execute()
      events.push('read')
      return rows.map((r) => r.key)
    })(),
  ])
  t.same(events, ['a:begin', 'a:commit', 'b:begin', 'b:commit', 'read'])
  t.same(seen.sort(), ['a', 'b'])
})

t.test('a failed transaction rolls back and frees the connection', async (t) => {
  const { db, close } = await openTestDatabase('pglite')
  t.teardown(close)
  await t.rejects(
    db.transaction().execute(async (trx) => {
      await trx.insertInto('service_settings').values({ key: 'x', value: '1' }).execute()
      await trx.insertInto('service_settings').values({ key: 'x', value: '2' }).execute()
    }),
    { code: '23505' },
  )
  t.same(await db.selectFrom('service_settings').selectAll().execute(), [])
  const trx = await db.startTransaction().execute()
  await trx.insertInto('service_settings').values({ key: 'kept', value: '1' }).execute()
  const sp = await trx.savepoint('inner').execute()
  await sp.insertInto('service_settings').values({ key: 'dropped', value: '1' }).execute()
  await sp.rollbackToSavepoint('inner').execute()
  await trx.commit().execute()
  const nested = await db.selectFrom('service_settings').select('key').execute()
  t.same(nested, [{ key: 'kept' }])
})

t.test('awaiting the outer db inside a transaction ends in PGliteBusyError, not a hang', async (t) => {
  const pglite = await PGlite.create()
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite, acquireTimeoutMs: 200 }) })
  t.teardown(() => db.destroy())
  const err = await db
    .transaction()
    .execute(async () => {
      await sql`select 1`.execute(db)
    })
    .catch((e: unknown) => e)
  t.type(err, PGliteBusyError)
  t.same((await sql<{ one: number }>`select 1 as one`.execute(db)).rows, [{ one: 1 }], 'usable afterwards')
})

t.test('streaming is refused; parameterless multi-statement text runs like pg', async (t) => {
  const { db, close } = await openTestDatabase('pglite')
  t.teardown(close)
  await t.rejects(async () => {
    for await (const row of db.selectFrom('tenants').selectAll().stream()) void row
  }, /not supported/)
  const { rows } = await sql<{ two: number }>`create temp table x (a int); select 2 as two`.execute(db)
  t.same(rows, [{ two: 2 }])
})

t.test('a closed PGlite fails fast, as unavailable', async (t) => {
  const pglite = await PGlite.create()
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) })
  await sql`select 1`.execute(db)
  await pglite.close()
  const err = await sql`select 1`.execute(db).catch((e: unknown) => e)
  t.match(err, { message: /PGlite is closed/ })
  t.ok(isDatabaseUnavailable(err))
  await db.destroy()
  const after = await sql`select 1`.execute(db).catch((e: unknown) => e)
  t.ok(isDatabaseUnavailable(after), 'a destroyed handle too')
})
