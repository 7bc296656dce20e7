import { createHash, randomUUID } from 'node:crypto'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { sql, type Kysely } from 'kysely'
import { isDatabaseUnavailable, type OpenedDatabase } from '../../src/db/connect.js'
import type { Database } from '../../src/db/database.js'
import { DatabaseRegistry, TenantBusyError, TenantMovingError } from '../../src/db/tenant-db.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { openTestDatabase, type TapTest, type TestDatabase } from '../helpers/db.js'
import {
  createKey,
  createTenant,
  createUser,
  freshIp,
  PASSWORD,
  platformKey,
  type UserFx,
} from '../helpers/fixtures.js'
import { call } from '../helpers/call.js'

// Why a longer bound than the suite's 120 s: its three cases pass in about 75 s alone, and over 120 s when the
// suite's other groups share the two cores (seen in CI; every assertion held).
t.setTimeout(360_000)

// Issue 10 item 6: no write is lost across a tenant's database move. The registry's per-tenant barrier
// (DatabaseRegistry.exclusive) and a request ledger run through main → routed → main.

const HAS_PG = !!process.env.TEST_DATABASE_URL
const NO_PG = HAS_PG ? false : 'TEST_DATABASE_URL is not set: routing needs a PostgreSQL server'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A test database as the registry holds a routed one. */
function asOpened(tdb: TestDatabase): OpenedDatabase {
  return {
    db: tdb.db,
    kind: tdb.kind,
    ping: async () => 1,
    stats: () => ({ total: 1, idle: 1, waiting: 0 }),
    close: async () => undefined,
  }
}

/** Which of the two stores a handle reached: each has a one-row `marker` table naming it. */
async function storeOf(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ v: string }>`select v from marker`.execute(db)
  const row = rows[0]
  if (!row) throw new Error('the marker table is empty')
  return row.v
}

async function twoStores(t: TapTest) {
  const a = await openTestDatabase('pglite', { empty: true })
  t.teardown(() => a.close())
  const b = await openTestDatabase('pglite', { empty: true })
  t.teardown(() => b.close())
  for (const [tdb, name] of [
    [a, 'a'],
    [b, 'b'],
  ] as const) {
    await sql`create table marker (v text)`.execute(tdb.db)
    await sql`insert into marker values (${name})`.execute(tdb.db)
  }
  return { a, b }
}

t.test('DatabaseRegistry.exclusive: the per-tenant barrier', async (t) => {
  const { a, b } = await twoStores(t)
  const stats = () => ({ total: 1, idle: 1, waiting: 0 })

  await t.test(
    'a switch waits for running transactions; queries that arrive meanwhile run on the new store',
    async (t) => {
      const reg = new DatabaseRegistry(a.db, stats, 'pglite', { waitMs: 5000, drainMs: 5000 })
      // Taken before the switch, used after it: the handle must not keep pointing at the former store.
      const db = reg.forTenant('t1')
      const events: string[] = []
      let finishTx!: () => void
      const held = new Promise<void>((r) => (finishTx = r))
      let txStarted!: () => void
      const started = new Promise<void>((r) => (txStarted = r))
      const tx = db.transaction().execute(async (trx) => {
        events.push(`tx on ${await storeOf(trx)}`)
        txStarted()
        await held
        events.push(`tx still on ${await storeOf(trx)}`)
      })
      await started
      const sw = reg.exclusive('t1', async () => {
        events.push('switch')
        await reg.route('t1', asOpened(b))
      })
      await sleep(50)
      const late = storeOf(db).then((s) => void events.push(`late query on ${s}`))
      await sleep(100)
      t.same(events, ['tx on a'], 'neither the switch nor the late query ran while the transaction held')
      finishTx()
      await Promise.all([tx, sw, late])
      t.same(events, ['tx on a', 'tx still on a', 'switch', 'late query on b'])
      t.equal(await storeOf(reg.forTenant('t2')), 'a', 'other tenants are not held up or moved')
    },
  )

  await t.test('a query waits at most waitMs, then fails as unavailable (503)', async (t) => {
    const reg = new DatabaseRegistry(a.db, stats, 'pglite', { waitMs: 150, drainMs: 1000 })
    const db = reg.forTenant('t1')
    const sw = reg.exclusive('t1', () => sleep(600))
    const began = performance.now()
    const err = await storeOf(db).then(
      () => null,
      (e: unknown) => e,
    )
    t.type(err, TenantMovingError)
    t.ok(isDatabaseUnavailable(err), 'answered as SERVICE_UNAVAILABLE')
    t.ok(performance.now() - began < 550, 'without waiting for the switch to end')
    await sw
    t.equal(await storeOf(db), 'a', 'the barrier opens again after the switch')
  })

  await t.test('a switch gives up (nothing run) when running work does not finish in time', async (t) => {
    const reg = new DatabaseRegistry(a.db, stats, 'pglite', { waitMs: 1000, drainMs: 150 })
    const db = reg.forTenant('t1')
    let finishTx!: () => void
    const held = new Promise<void>((r) => (finishTx = r))
    let txStarted!: () => void
    const started = new Promise<void>((r) => (txStarted = r))
    const tx = db.transaction().execute(async (trx) => {
      await storeOf(trx)
      txStarted()
      await held
    })
    await started
    let ran = false
    await t.rejects(
      reg.exclusive('t1', async () => void (ran = true)),
      TenantBusyError,
    )
    t.equal(ran, false)
    finishTx()
    await tx
    t.equal(await storeOf(db), 'a', 'queries run again')
  })
})

t.test(
  'setTenantDatabase: a request of a tenant being switched answers 503 SERVICE_UNAVAILABLE after its wait',
  async (t) => {
    const app = await buildTestApp(t)
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    // The switch lasts until the request has answered: no race with a timer on a loaded machine (a 4.5 s
    // switch once ended first, under four test processes on two cores).
    let endSwitch!: () => void
    const switching = new Promise<void>((r) => (endSwitch = r))
    const sw = app.ctx.dbs.exclusive(tenant.id, () => switching)
    const res = await call(
      app,
      'login',
      {},
      { body: { tenantCode: tenant.code, identifier: user.email, password: PASSWORD } },
    )
    t.equal(res.status, 503, 'answered while the switch still runs')
    t.equal(res.body.code, 'SERVICE_UNAVAILABLE')
    endSwitch()
    await sw
    const after = await call(
      app,
      'login',
      {},
      { body: { tenantCode: tenant.code, identifier: user.email, password: PASSWORD } },
    )
    t.equal(after.status, 200)
  },
)

// ---------------------------------------------------------------------------------------------------
// The ledger: every request made while the tenant moves main → routed → main, and what it was answered.

interface Entry {
  op: 'login' | 'refresh' | 'register' | 'role'
  requestId: string
  status: number
  code?: string
  began: number
  ended: number
  /** login/refresh: the refresh token presented (refresh) and the one received. */
  presented?: string
  received?: string
  /** register: the email; role: the name. */
  name?: string
  viaKey?: boolean
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex')

class Ledger {
  readonly entries: Entry[] = []

  async send(
    app: FastifyInstance,
    op: Entry['op'],
    url: string,
    body: object,
    headers: Record<string, string> = {},
  ): Promise<Entry> {
    const requestId = `ledger-${randomUUID()}`
    const began = performance.now()
    const res = await app.inject({
      method: 'POST',
      url: `/api/v1${url}`,
      headers: { 'x-request-id': requestId, ...headers },
      remoteAddress: freshIp(),
      payload: body,
    })
    const json = res.json() as { data?: { refreshToken?: string }; code?: string }
    const entry: Entry = {
      op,
      requestId,
      status: res.statusCode,
      code: json.code,
      began,
      ended: performance.now(),
      received: json.data?.refreshToken,
      viaKey: 'x-client-key' in headers,
    }
    this.entries.push(entry)
    return entry
  }

  ok(op?: Entry['op']): Entry[] {
    return this.entries.filter((e) => e.status < 300 && (op === undefined || e.op === op))
  }
}

t.test(
  'setTenantDatabase: no answered write is lost across main → routed → main under concurrent load',
  { skip: NO_PG },
  async (t) => {
    const app: TestApp = await buildTestApp(t, { DATABASE_ROUTING_ALLOWED_HOSTS: '127.0.0.1' })
    const target = await openTestDatabase('postgres', { empty: true })
    t.teardown(() => target.close())
    const routedUrl = (() => {
      const u = new URL(target.url)
      u.password = 'ledger-pw'
      return u.toString()
    })()
    const tenant = await createTenant(app, {
      maxConcurrentSessions: 1000,
      rateLimits: { requestsPerMinute: 100_000, loginPerMinute: 100_000 },
    })
    const users: UserFx[] = []
    for (let i = 0; i < 3; i++) users.push(await createUser(app, tenant))
    const key = await createKey(app, tenant, ['users:create', 'roles:create'])
    const ledger = new Ledger()
    const loginAs = (u: UserFx) =>
      ledger.send(app, 'login', '/login', {
        tenantCode: tenant.code,
        identifier: u.email,
        password: PASSWORD,
      })

    // Each user's refresh chain starts from a login before the load.
    const heads: (string | undefined)[] = []
    for (const u of users) heads.push((await loginAs(u)).received)
    t.ok(heads.every(Boolean), 'chains started')

    let stop = false
    const refreshOnce = async (token: string) => {
      const e = await ledger.send(app, 'refresh', '/refresh', { refreshToken: token })
      e.presented = token
      return e
    }
    const chain = async (user: UserFx, i: number) => {
      for (let n = 0; !stop; n++) {
        const head = heads[i] as string
        // Every fourth turn the same token twice at once: at most one of them may win.
        const tries =
          n % 4 === 3 ? await Promise.all([refreshOnce(head), refreshOnce(head)]) : [await refreshOnce(head)]
        const won = tries.filter((e) => e.status === 200)
        const [winner] = won
        if (winner) heads[i] = winner.received
        else if (tries.some((e) => e.status === 503)) {
          // Unknown whether it rotated before failing: start a fresh chain.
          heads[i] = (await loginAs(user)).received ?? heads[i]
        }
      }
    }
    const logins = async () => {
      for (let n = 0; !stop; n++) await loginAs(users[n % users.length]!)
    }
    const keyHeaders = { 'x-client-key': key.value }
    const registrations = async () => {
      while (!stop) {
        const email = `ledger-${randomUUID().slice(0, 12)}@example.test`
        const e = await ledger.send(
          app,
          'register',
          '/register',
          { email, password: 'Ledger-pass-2024!x' },
          keyHeaders,
        )
        e.name = email
      }
    }
    const roles = async () => {
      while (!stop) {
        const name = `ledger-${randomUUID().slice(0, 12)}`
        const e = await ledger.send(app, 'role', '/roles', { name }, keyHeaders)
        e.name = name
      }
    }
    const load = Promise.all([...users.map(chain), logins(), registrations(), roles(), roles()])

    const moves: { began: number; ended: number; status: number }[] = []
    const move = async (url: string | null) => {
      const began = performance.now()
      const res = await call(app, 'setTenantDatabase', platformKey, {
        params: { id: tenant.id },
        body: { url },
      })
      moves.push({ began, ended: performance.now(), status: res.status })
      return res
    }
    await sleep(600)
    t.equal((await move(routedUrl)).status, 200, 'moved to its own database under load')
    t.ok(app.ctx.dbs.routedFor(tenant.id), 'routed')
    await sleep(600)
    t.equal((await move(null)).status, 200, 'and back to the main database under load')
    t.equal(app.ctx.dbs.routedFor(tenant.id), undefined)
    await sleep(300)
    stop = true
    await load
    await app.keyUsage.flush()

    const main = app.ctx.dbs.main
    const during = (e: Entry) => moves.some((m) => e.ended > m.began && e.began < m.ended)
    t.ok(
      ledger.ok().filter(during).length > 0,
      `answered writes overlapped the moves (${ledger.ok().filter(during).length})`,
    )

    await t.test('answers: no 500, no refusal of a valid credential', async (t) => {
      const byStatus = new Map<string, number>()
      for (const e of ledger.entries)
        byStatus.set(`${e.op} ${e.status}`, (byStatus.get(`${e.op} ${e.status}`) ?? 0) + 1)
      t.comment(JSON.stringify(Object.fromEntries(byStatus)))
      const unexpected = ledger.entries.filter((e) => {
        if (e.status === 503) return false
        if (e.op === 'login') return e.status !== 200
        if (e.op === 'register' || e.op === 'role') return e.status !== 201
        // A refresh may lose only to its twin (the other of two concurrent uses of one token).
        if (e.status === 200) return false
        const twin = ledger.entries.find((o) => o !== e && o.op === 'refresh' && o.presented === e.presented)
        return !(e.status === 401 && twin?.status === 200)
      })
      t.same(
        unexpected.map((e) => `${e.op} ${e.status} ${e.code ?? ''}`),
        [],
        'every answer is a success, a 503, or the loser of a refresh race',
      )
    })

    await t.test(
      'every answered refresh token is in the final store, exactly once; no family has two winners',
      async (t) => {
        const rows = await main
          .selectFrom('refresh_tokens')
          .select(['id', 'token_hash', 'session_id', 'rotated_at', 'revoked_at', 'replaced_by'])
          .where('tenant_id', '=', tenant.id)
          .execute()
        const byHash = new Map<string, typeof rows>()
        for (const r of rows) byHash.set(r.token_hash, [...(byHash.get(r.token_hash) ?? []), r])
        const issued = ledger.ok().filter((e) => e.op === 'login' || e.op === 'refresh')
        const missing = issued.filter((e) => byHash.get(sha256(e.received as string))?.length !== 1)
        t.equal(missing.length, 0, `${issued.length} issued tokens, each stored once`)
        const winsPerToken = new Map<string, number>()
        for (const e of ledger.ok('refresh'))
          winsPerToken.set(e.presented as string, (winsPerToken.get(e.presented as string) ?? 0) + 1)
        t.same(
          [...winsPerToken.values()].filter((n) => n > 1),
          [],
          'no token won twice',
        )
        for (const e of ledger.ok('refresh')) {
          const old = byHash.get(sha256(e.presented as string))?.[0]
          const next = byHash.get(sha256(e.received as string))?.[0]
          if (old?.replaced_by !== next?.id) t.fail('the presented token names its successor')
        }
        const live = new Map<string, number>()
        for (const r of rows)
          if (r.rotated_at === null && r.revoked_at === null)
            live.set(r.session_id, (live.get(r.session_id) ?? 0) + 1)
        t.same(
          [...live.values()].filter((n) => n > 1),
          [],
          'at most one live token per session',
        )
      },
    )

    await t.test('every answered registration and role is in the final store, exactly once', async (t) => {
      const emails = await main
        .selectFrom('users')
        .select('email')
        .where('tenant_id', '=', tenant.id)
        .execute()
      const names = await main.selectFrom('roles').select('name').where('tenant_id', '=', tenant.id).execute()
      const count = (list: (string | null)[], v: string) => list.filter((x) => x === v).length
      const registered = ledger.ok('register')
      const created = ledger.ok('role')
      t.ok(registered.length > 0 && created.length > 0, `${registered.length} users, ${created.length} roles`)
      t.same(
        registered
          .filter(
            (e) =>
              count(
                emails.map((r) => r.email),
                e.name as string,
              ) !== 1,
          )
          .map((e) => e.name),
        [],
      )
      t.same(
        created
          .filter(
            (e) =>
              count(
                names.map((r) => r.name),
                e.name as string,
              ) !== 1,
          )
          .map((e) => e.name),
        [],
      )
    })

    await t.test(
      'every answered audited request has its one audit row; every key request its usage row',
      async (t) => {
        const audit = await main
          .selectFrom('tessera_audit.audit_log')
          .select(['request_id', 'action', 'success'])
          .where('tenant_id', '=', tenant.id)
          .execute()
        const rowsFor = (id: string) => audit.filter((r) => r.request_id === id)
        const audited = ledger.ok().filter((e) => e.op !== 'role')
        const wrong = audited.filter((e) => {
          const rows = rowsFor(e.requestId)
          return rows.length !== 1 || !rows[0]?.success
        })
        t.same(
          wrong.map((e) => `${e.op} ${e.requestId} ${rowsFor(e.requestId).length}`),
          [],
          `${audited.length} rows`,
        )
        const usage = await main
          .selectFrom('client_key_usage')
          .select('request_id')
          .where('key_id', '=', key.id)
          .execute()
        const keyed = ledger.entries.filter((e) => e.viaKey)
        const badUsage = keyed.filter((e) => usage.filter((u) => u.request_id === e.requestId).length !== 1)
        t.equal(badUsage.length, 0, `${keyed.length} key requests, one usage row each`)
      },
    )

    // Audit rows stay in the database left, marked, until retention removes them: the service's role
    // cannot delete them (docs/decisions.md D17). Each one is in main as well.
    await t.test(
      'nothing of the tenant is left in the database it left, but copied audit rows',
      async (t) => {
        for (const table of ['users', 'roles', 'sessions', 'refresh_tokens'] as const) {
          const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}
          where tenant_id = ${tenant.id}`.execute(target.db)
          t.equal(rows[0]?.n, 0, table)
        }
        const ids = async (db: typeof main) =>
          (
            await db
              .selectFrom('tessera_audit.audit_log')
              .select('id')
              .where('tenant_id', '=', tenant.id)
              .execute()
          ).map((r) => r.id)
        const home = new Set(await ids(main))
        t.same(
          (await ids(target.db)).filter((id) => !home.has(id)),
          [],
          'every audit row left behind is in main too',
        )
      },
    )
  },
)
