import { existsSync } from 'node:fs'
import { createServer, type Socket } from 'node:net'
import { join } from 'node:path'
import { sql } from 'kysely'
import t from 'tap'
import {
  DatabaseTimeoutError,
  isDatabaseUnavailable,
  openDatabase,
  openPostgres,
} from '../../src/db/connect.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { migrations } from '../../src/db/migrations/index.js'
import { backends, openTestDatabase } from '../helpers/db.js'

t.test('no URL: PGlite on disk under dataDir, kept across reopen', async (t) => {
  const dataDir = join(t.testdir(), 'nested', 'data')
  const first = await openDatabase(undefined, { dataDir })
  t.equal(first.kind, 'pglite')
  t.ok(existsSync(join(dataDir, 'pgdata')), 'the directory was created')
  t.same(await migrateToLatest(first.db), Object.keys(migrations))
  await first.db.insertInto('service_settings').values({ key: 'jwt_secret', value: 's' }).execute()
  t.same(first.stats(), { total: 1, idle: 1, waiting: 0 })
  await first.close()
  await first.close()

  const again = await openDatabase(undefined, { dataDir })
  t.teardown(again.close)
  t.same(await migrateToLatest(again.db), [])
  const row = await again.db
    .selectFrom('service_settings')
    .select('value')
    .where('key', '=', 'jwt_secret')
    .execute()
  t.same(row, [{ value: 's' }])
})

t.test('memory://: a throw-away PGlite that answers ping', async (t) => {
  const opened = await openDatabase('memory://', { dataDir: 'unused' })
  t.teardown(opened.close)
  t.equal(opened.kind, 'memory')
  const ms = await opened.ping()
  t.ok(ms >= 0 && ms < 1000, `ping ${ms} ms`)
  t.equal(existsSync('unused'), false, 'nothing written to disk')
})

t.test('refuses other URL schemes', async (t) => {
  await t.rejects(openDatabase('mysql://x', { dataDir: '' }), /memory:\/\/ or postgres:\/\//)
})

t.test('a closed port is unavailable, well within 5 s', async (t) => {
  const opened = await openDatabase('postgres://postgres@127.0.0.1:1/nowhere', { dataDir: '' })
  t.teardown(opened.close)
  t.equal(opened.kind, 'postgres')
  const start = Date.now()
  const err = await opened.db
    .selectFrom('tenants')
    .selectAll()
    .execute()
    .catch((e: unknown) => e)
  t.ok(Date.now() - start < 5000, `failed after ${Date.now() - start} ms`)
  t.ok(isDatabaseUnavailable(err), String(err))
  const pingErr = await opened.ping().catch((e: unknown) => e)
  t.ok(isDatabaseUnavailable(pingErr))
  t.same(opened.stats(), { total: 0, idle: 0, waiting: 0 })
})

t.test('a server that accepts but never answers: connect and ping time out as unavailable', async (t) => {
  const sockets = new Set<Socket>()
  const server = createServer((s) => void sockets.add(s))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => {
    for (const s of sockets) s.destroy()
    server.close()
  })
  const { port } = server.address() as { port: number }
  const url = `postgres://postgres@127.0.0.1:${port}/x`

  const quick = openPostgres(url, { connectionTimeoutMillis: 300 })
  t.teardown(quick.close)
  const err = await sql`select 1`.execute(quick.db).catch((e: unknown) => e)
  t.ok(isDatabaseUnavailable(err), String(err))

  const defaults = openPostgres(url, { pingTimeoutMillis: 300 })
  t.teardown(defaults.close)
  const start = Date.now()
  const pingErr = await defaults.ping().catch((e: unknown) => e)
  t.type(pingErr, DatabaseTimeoutError)
  t.ok(Date.now() - start < 1000)
  t.ok(isDatabaseUnavailable(pingErr))
})

t.test('isDatabaseUnavailable', async (t) => {
  const yes: unknown[] = [
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
    Object.assign(new Error('getaddrinfo ENOTFOUND db'), { code: 'ENOTFOUND' }),
    Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
    new Error('Connection terminated unexpectedly'),
    new Error('Connection terminated due to connection timeout'),
    new Error('timeout exceeded when trying to connect'),
    new Error('Query read timeout'),
    new Error('PGlite is closed'),
    { code: '08006', message: 'connection failure' },
    { code: '08P01', message: 'protocol violation' },
    { code: '57P01', message: 'terminating connection due to administrator command' },
    { code: '57P03', message: 'the database system is starting up' },
    new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })], ''),
    new Error('migration failed', { cause: { code: '57P01' } }),
  ]
  const no: unknown[] = [
    undefined,
    null,
    'ECONNREFUSED',
    new Error('boom'),
    { code: '23505', message: 'duplicate key value violates unique constraint' },
    { code: '42601', message: 'syntax error' },
    { code: '42501', message: 'audit_log rows are immutable' },
    { code: '57014', message: 'canceling statement due to statement timeout' },
  ]
  for (const err of yes) t.ok(isDatabaseUnavailable(err), `yes: ${String((err as Error)?.message ?? err)}`)
  for (const err of no) t.notOk(isDatabaseUnavailable(err), `no: ${String((err as Error)?.message ?? err)}`)
})

t.test(
  'PostgreSQL: a terminated connection fails its query as unavailable and the pool recovers',
  { skip: backends().includes('postgres') ? false : 'TEST_DATABASE_URL is not set' },
  async (t) => {
    const tdb = await openTestDatabase('postgres')
    t.teardown(tdb.close)
    const warnings: string[] = []
    const opened = openPostgres(tdb.url, { poolMax: 3, logger: { warn: (_o, msg) => warnings.push(msg) } })
    t.teardown(opened.close)
    const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(opened.db)
    const pid = rows[0]?.pid
    if (pid === undefined) throw new Error('select pg_backend_pid() returned no row')

    // An active query whose backend is killed: the query rejects, the process does not crash.
    const busy = sql`select pg_sleep(5)`.execute(opened.db).catch((e: unknown) => e)
    await new Promise((r) => setTimeout(r, 200))
    const killed = await sql<{ pid: number }>`select pid from pg_stat_activity
      where datname = current_database() and query like 'select pg_sleep%' and pid <> pg_backend_pid()`.execute(
      tdb.db,
    )
    t.equal(killed.rows.length, 1)
    await sql`select pg_terminate_backend(${killed.rows[0]!.pid})`.execute(tdb.db)
    t.ok(isDatabaseUnavailable(await busy), 'the running query fails as unavailable')

    // Idle clients killed: the pool's error listener logs, nothing crashes.
    await sql`select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid()`.execute(tdb.db)
    await new Promise((r) => setTimeout(r, 200))
    t.ok(warnings.length > 0, 'idle client errors were logged')
    const after = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(opened.db)
    const afterPid = after.rows[0]?.pid
    if (afterPid === undefined) throw new Error('select pg_backend_pid() returned no row')
    t.not(afterPid, pid, 'a new connection serves the next query')
    t.ok((await opened.ping()) >= 0)
  },
)
