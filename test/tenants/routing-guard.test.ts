import { rm, writeFile } from 'node:fs/promises'
import { networkInterfaces, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import t from 'tap'
import { sql } from 'kysely'
import { openRoutedDatabase } from '../../src/modules/tenants/routing/connect.js'
import { isForbiddenAddress } from '../../src/modules/tenants/routing/address.js'
import { storedRoutingTarget } from '../../src/modules/tenants/routing/url.js'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, platformKey } from '../helpers/fixtures.js'
import { call } from '../helpers/call.js'
import { fakePostgres, withEnv } from './support.js'

// setTenantDatabase (openapi/paths/tenants.yaml, docs/decisions.md D10) and the routed connection's
// credentials. None of these needs a PostgreSQL server: every target here is refused or is a stand-in
// that refuses the login.

/** The service's own connection settings, as an operator might export them for the main database. */
const SERVICE_PG_ENV = {
  PGUSER: 'service-user',
  PGPASSWORD: 'service-env-pw',
  PGDATABASE: 'service-db',
  PGHOST: '203.0.113.7',
  PGPORT: '1',
  PGSSLMODE: 'require',
}

/** How long a refused reachability check takes (the routed connect timeout). */
const CONNECT_TIMEOUT_MS = 4000

/** Listens on a free loopback port; closes in teardown, dropping any connection still open. */
async function listen(t: { teardown(fn: () => unknown): void }, server: Server): Promise<number> {
  const sockets = new Set<Socket>()
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        if (!server.listening) return resolve()
        server.close(() => resolve())
      }),
  )
  return (server.address() as AddressInfo).port
}

t.test('isForbiddenAddress: loopback, link-local and unspecified, in every form', async (t) => {
  for (const a of [
    '127.0.0.1',
    '127.255.255.254',
    '169.254.169.254',
    '0.0.0.0',
    '0.1.2.3',
    '::1',
    '::',
    '0:0:0:0:0:0:0:1',
    'fe80::1',
    'febf:ffff::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.1.1',
    '::ffff:0.0.0.0',
    '::127.0.0.1',
    'not-an-address',
  ])
    t.ok(isForbiddenAddress(a), a)
  for (const a of [
    '10.0.0.1',
    '192.168.1.10',
    '172.16.0.1',
    '203.0.113.5',
    '::ffff:10.0.0.1',
    'fd00::2',
    'fec0::1',
    '2001:db8::1',
  ])
    t.notOk(isForbiddenAddress(a), a)
})

t.test('setTenantDatabase without DATABASE_ROUTING_ALLOWED_HOSTS', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  // Something listening on loopback: a refused host must never reach it.
  let reached = 0
  const local = createServer((s) => {
    reached++
    s.destroy()
  })
  const port = await listen(t, local)
  const put = (url: string) =>
    call(app, 'setTenantDatabase', platformKey, { params: { id: tenant.id }, body: { url } })

  await t.test(
    '422 DATABASE_ROUTING_FAILED for hosts resolving to loopback, link-local or unspecified',
    async (t) => {
      for (const host of [
        '127.0.0.1',
        '127.8.9.10',
        'localhost',
        '[::1]',
        '[0:0:0:0:0:0:0:1]',
        '0.0.0.0',
        '[::]',
        '169.254.169.254',
        '[fe80::1]',
        '[::ffff:127.0.0.1]',
        '[::ffff:169.254.169.254]',
        // Spellings that only the resolver turns into 127.0.0.1 (postgres:// URLs keep hosts opaque).
        '2130706433',
        '0x7f000001',
        '127.1',
      ]) {
        const res = await put(`postgres://user:pw@${host}:${port}/db`)
        t.equal(res.status, 422, host)
        t.equal(res.body.code, 'DATABASE_ROUTING_FAILED', host)
        // The address check's own answer: an attempt to connect would answer "unreachable" instead
        // (not a timing bound, which a loaded CI machine broke).
        t.match(
          res.body.error,
          /resolves to a loopback, link-local or unspecified/,
          `${host}: refused without connecting`,
        )
      }
      t.equal(reached, 0, 'no connection was opened to a refused address')
      t.equal(app.ctx.dbs.routedFor(tenant.id), undefined)
      t.equal((await app.ctx.dbs.main.selectFrom('tenant_databases').selectAll().execute()).length, 0)
    },
  )
})

t.test('routed connections check every address they connect to', async (t) => {
  const external = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address
  if (!external) {
    t.pass('skipped: no non-loopback IPv4 interface to stand in for a remote server')
    return
  }
  const server = await fakePostgres('0.0.0.0')
  t.teardown(server.close)
  // A name whose answer changes between two connections (DNS rebinding): a routed address, then loopback.
  const answers = [external, '127.0.0.1']
  const resolve = async () => [{ address: answers.shift() ?? '127.0.0.1', family: 4 }]
  const target = storedRoutingTarget(`postgres://route-user:route-pw@db.rebind.test:${server.port}/route-db`)
  const opened = openRoutedDatabase(target.connection, {
    poolMax: 1,
    connectionTimeoutMillis: 2000,
    checkAddresses: true,
    resolve,
  })
  t.teardown(() => opened.close())

  const first = await sql`select 1`.execute(opened.db).catch((e: unknown) => e as { code?: string })
  t.equal((first as { code?: string }).code, '28P01', 'the first connection reached the resolved address')
  t.equal(server.seen.length, 1)
  t.equal(server.seen[0]?.localAddress, external, 'at the address the check passed')
  t.equal(server.seen[0]?.params.user, 'route-user')

  const second = await sql`select 1`.execute(opened.db).catch((e: unknown) => e as { code?: string })
  t.equal((second as { code?: string }).code, 'EROUTINGADDRESS', 'the second answer (loopback) is refused')
  t.equal(server.seen.length, 1, 'and never connected to')
})

t.test(
  'setTenantDatabase: a failed reachability check does not tell an open port from a closed one',
  async (t) => {
    const app = await buildTestApp(t, { DATABASE_ROUTING_ALLOWED_HOSTS: '127.0.0.1' })
    const tenant = await createTenant(app)
    const closesPort = await listen(
      t,
      createServer((s) => s.destroy()),
    )
    const silentPort = await listen(
      t,
      createServer(() => undefined),
    )
    const refusesLogin = await fakePostgres()
    t.teardown(refusesLogin.close)
    const closed = createServer()
    const closedPort = await listen(t, closed)
    await new Promise<void>((r) => closed.close(() => r()))

    const answers: string[] = []
    for (const [what, port] of [
      ['closed port', closedPort],
      ['open port that hangs up', closesPort],
      ['open port that says nothing', silentPort],
      ['PostgreSQL refusing the login', refusesLogin.port],
    ] as const) {
      const started = performance.now()
      const res = await call(app, 'setTenantDatabase', platformKey, {
        params: { id: tenant.id },
        body: {
          url: `postgres://user:pw@127.0.0.1:${port}/db`,
        },
      })
      const ms = performance.now() - started
      t.equal(res.status, 422, what)
      t.ok(
        ms >= CONNECT_TIMEOUT_MS - 50,
        `${what}: answered after the connect timeout (${Math.round(ms)} ms)`,
      )
      t.ok(ms < CONNECT_TIMEOUT_MS + 1500, `${what}: and not much later`)
      answers.push(JSON.stringify(res.body))
    }
    t.equal(new Set(answers).size, 1, 'one answer for all of them')
    t.equal(app.ctx.dbs.routedFor(tenant.id), undefined)
  },
)

t.test('setTenantDatabase never lends the service’s connection settings to a routed database', async (t) => {
  const pgpass = join(tmpdir(), `tessera-pgpass-${process.pid}`)
  await writeFile(pgpass, '*:*:*:*:pgpass-file-pw\n', { mode: 0o600 })
  t.teardown(() => rm(pgpass, { force: true }))
  withEnv(t, { ...SERVICE_PG_ENV, PGPASSFILE: pgpass })
  const server = await fakePostgres()
  t.teardown(server.close)
  // Why PGlite: these variables are meant for the service's own connection; a PostgreSQL main database
  // would read PGSSLMODE too, and this test is about the routed connections only.
  const app = await buildTestApp(t, { DATABASE_ROUTING_ALLOWED_HOSTS: '127.0.0.1' }, { backend: 'pglite' })
  const tenant = await createTenant(app)
  const put = (url: string) =>
    call(app, 'setTenantDatabase', platformKey, { params: { id: tenant.id }, body: { url } })

  await t.test(
    '422 for a URL that leaves the user, the password or the database to the environment',
    async (t) => {
      for (const url of [
        `postgres://route-user@127.0.0.1:${server.port}/route-db`,
        `postgres://route-user:@127.0.0.1:${server.port}/route-db`,
        `postgres://:route-pw@127.0.0.1:${server.port}/route-db`,
        `postgres://127.0.0.1:${server.port}/route-db`,
        `postgres://route-user:route-pw@127.0.0.1:${server.port}`,
      ]) {
        const res = await put(url)
        t.equal(res.status, 422, url)
        t.equal(res.body.code, 'DATABASE_ROUTING_FAILED')
      }
      t.equal(server.seen.length, 0, 'refused before connecting: nothing was sent anywhere')
    },
  )

  await t.test('a complete URL connects with its own values only', async (t) => {
    const res = await put(`postgres://route-user:route-pw@127.0.0.1:${server.port}/route-db`)
    t.equal(res.status, 422, 'the stand-in refuses the login')
    t.ok(server.seen.length >= 1, 'the URL’s host and port were used, not PGHOST/PGPORT')
    for (const c of server.seen) {
      t.equal(c.sslRequested, false, 'no TLS: PGSSLMODE is not read')
      t.equal(c.params.user, 'route-user')
      t.equal(c.params.database, 'route-db')
      t.equal(c.password, 'route-pw')
    }
  })

  await t.test(
    'a stored route without a password sends none rather than PGPASSWORD or ~/.pgpass',
    async (t) => {
      const before = server.seen.length
      const target = storedRoutingTarget(`postgres://legacy-user@127.0.0.1:${server.port}/legacy-db`)
      const opened = openRoutedDatabase(target.connection, {
        poolMax: 1,
        connectionTimeoutMillis: 2000,
        checkAddresses: false,
      })
      t.teardown(() => opened.close())
      await t.rejects(opened.ping())
      const c = server.seen[before]
      if (!c) throw new Error('the stand-in server saw no connection')
      t.equal(c.params.user, 'legacy-user')
      t.equal(c.params.database, 'legacy-db')
      t.equal(c.password, '')
    },
  )
})
