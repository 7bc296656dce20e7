import t from 'tap'
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { buildTestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/db.js'
import { createTenant } from '../helpers/fixtures.js'
import { databaseBusy } from '../../src/modules/system/activity-queries.js'
import { BATCH_BUDGET_MS, keepingPlace, Pacer, type SweepStep } from '../../src/modules/system/pace.js'
import { sweepOnce } from '../../src/modules/system/retention.js'
import { deleteUsageBefore } from '../../src/modules/client-keys/usage-queries.js'
import { sweepExpiredPayloads } from '../../src/modules/oidc/payload-queries.js'
import { openPostgres } from '../../src/db/connect.js'

// Retention's pacing (issue 45, src/modules/system/pace.ts): batches sized to a time budget, a pause after
// each while the database is busy, and sweeps that start each batch where the last one ended.

const DAY = 86_400_000
const never = async () => false

t.test(
  'Pacer: a slow batch halves the next, a quick one doubles it, within 100 rows and the maximum',
  async (t) => {
    const p = new Pacer(undefined as never, 5000, { busy: never })
    t.equal(p.size(), 5000, 'starts at the maximum')
    await p.after(BATCH_BUDGET_MS + 1)
    t.equal(p.size(), 2500)
    for (let i = 0; i < 10; i++) await p.after(BATCH_BUDGET_MS * 3)
    t.equal(p.size(), 100, 'never below 100 rows')
    await p.after(BATCH_BUDGET_MS / 2)
    t.equal(p.size(), 100, 'a batch within the budget keeps its size')
    await p.after(1)
    t.equal(p.size(), 200)
    for (let i = 0; i < 10; i++) await p.after(1)
    t.equal(p.size(), 5000, 'never above the maximum')
    const small = new Pacer(undefined as never, 3, { busy: never })
    await small.after(BATCH_BUDGET_MS * 3)
    t.equal(small.size(), 3, 'a maximum under 100 is also the minimum')
  },
)

t.test(
  'Pacer: while the database is busy it waits as long as the batch took (at most twice the budget)',
  async (t) => {
    const slept: number[] = []
    let busy = true
    const p = new Pacer(undefined as never, 1000, {
      busy: async () => busy,
      sleep: async (ms) => void slept.push(ms),
    })
    await p.after(40)
    await p.after(BATCH_BUDGET_MS * 5)
    busy = false
    await p.after(40)
    t.same(slept, [40, BATCH_BUDGET_MS * 2], 'no wait once it is idle')
  },
)

t.test(
  'keepingPlace: each batch starts at the key the last one ended at, until one comes back short',
  async (t) => {
    const keys = Array.from({ length: 23 }, (_, i) => new Date(Date.UTC(2026, 0, 1 + i)))
    let rows = [...keys]
    const froms: (number | null)[] = []
    const step: SweepStep = async (from, limit) => {
      froms.push(from?.getTime() ?? null)
      const picked = rows.filter((k) => from === null || k >= from).slice(0, limit)
      rows = rows.filter((k) => !picked.includes(k))
      return { n: picked.length, last: picked.at(-1) ?? null }
    }
    const total = await keepingPlace(step, new Pacer(undefined as never, 10, { busy: never }))
    t.equal(total, 23)
    t.same(froms, [null, keys[9]?.getTime(), keys[19]?.getTime()], 'never from the start again')
    t.same(rows, [])
    const none = await keepingPlace(async () => ({ n: 0, last: null }), new Pacer(undefined as never, 10))
    t.equal(none, 0)
  },
)

t.test('databaseBusy: another client of the database in the last second', (t) =>
  forEachBackend(t, async (t, { db, kind, url }) => {
    if (kind !== 'postgres') {
      t.equal(await databaseBusy(db), false, 'an embedded database has no other client')
      return
    }
    const other = openPostgres(url, { poolMax: 1 })
    t.teardown(() => other.close())
    await sql`select 1`.execute(other.db)
    t.equal(await databaseBusy(db), true, 'a statement just now')
    await new Promise((r) => setTimeout(r, 1300))
    t.equal(await databaseBusy(db), false, 'idle for over a second')
  }),
)

t.test('deleteUsageBefore: the oldest rows from its lower bound on, and the created_at of the last', (t) =>
  forEachBackend(t, async (t, { db }) => {
    const tenantId = randomUUID()
    const now = Date.now()
    await db
      .insertInto('tenants')
      .values({ id: tenantId, name: 'pace', code: `pace${now}`, auth_config: '{}' })
      .execute()
    const at = (days: number) => new Date(now - days * DAY)
    for (const days of [100, 99, 98, 97, 10])
      await db
        .insertInto('client_key_usage')
        .values({
          tenant_id: tenantId,
          key_id: randomUUID(),
          method: 'GET',
          route: '/',
          status_code: 200,
          created_at: at(days),
        })
        .execute()
    const before = at(90)
    t.same(await deleteUsageBefore(db, { before, batch: 2, from: null }), { n: 2, last: at(99) })
    t.same(
      await deleteUsageBefore(db, { before, batch: 2, from: at(97) }),
      { n: 1, last: at(97) },
      'from its bound',
    )
    t.same(await deleteUsageBefore(db, { before, batch: 2, from: at(99) }), { n: 1, last: at(98) })
    t.same(await deleteUsageBefore(db, { before, batch: 2, from: null }), { n: 0, last: null })
    const left = await db
      .selectFrom('client_key_usage')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .execute()
    t.equal(left.length, 1, 'the recent row stays')
  }),
)

t.test(
  'sweepOnce: a backlog goes in several paced batches, with a pause after each while busy',
  async (t) => {
    const app = await buildTestApp(t, { USAGE_RETENTION_DAYS: '90' })
    const tenant = await createTenant(app)
    const db = app.ctx.dbs.main
    for (let i = 0; i < 7; i++)
      await db
        .insertInto('client_key_usage')
        .values({
          tenant_id: tenant.id,
          key_id: randomUUID(),
          method: 'GET',
          route: '/api/v1/me',
          status_code: 200,
          created_at: new Date(Date.now() - (100 + i) * DAY),
        })
        .execute()
    const slept: number[] = []
    const counts = await sweepOnce(app.ctx, {
      batch: 3,
      hooks: { busy: async () => true, sleep: async (ms) => void slept.push(ms) },
    })
    t.equal(counts?.usage, 7)
    t.ok(slept.length >= 2, `paused after each full batch (${slept.length} pauses)`)
  },
)

t.test('sweepExpiredPayloads: expired payloads in expiry order from its lower bound on', (t) =>
  forEachBackend(t, async (t, { db }) => {
    const tenantId = randomUUID()
    const now = new Date()
    await db
      .insertInto('tenants')
      .values({ id: tenantId, name: 'pace', code: `p${tenantId.slice(0, 8)}`, auth_config: '{}' })
      .execute()
    const at = (minutes: number) => new Date(now.getTime() + minutes * 60_000)
    for (const [i, minutes] of [-50, -40, -30, -20, 10].entries())
      await sql`insert into oidc_payloads (tenant_id, model, id, payload, expires_at)
        values (${tenantId}, 'AccessToken', ${`t${i}`}, '{}', ${at(minutes)})`.execute(db)
    await sql`insert into oidc_payloads (tenant_id, model, id, payload) values (${tenantId}, 'Client', 'c', '{}')`.execute(
      db,
    )
    t.same(await sweepExpiredPayloads(db, { now, limit: 2, from: null }), { n: 2, last: at(-40) })
    t.same(
      await sweepExpiredPayloads(db, { now, limit: 2, from: at(-20) }),
      { n: 1, last: at(-20) },
      'from its bound',
    )
    t.same(await sweepExpiredPayloads(db, { now, limit: 2, from: null }), { n: 1, last: at(-30) })
    t.same(await sweepExpiredPayloads(db, { now, limit: 2, from: null }), { n: 0, last: null })
    const { rows } = await sql<{
      id: string
    }>`select id from oidc_payloads where tenant_id = ${tenantId} order by id`.execute(db)
    t.same(
      rows.map((r) => r.id),
      ['c', 't4'],
      'the live one and the one that never expires stay',
    )
  }),
)
