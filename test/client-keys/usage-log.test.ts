import t from 'tap'
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type QueryResult,
} from 'kysely'
import type { Database } from '../../src/db/database.js'
import { createManualClock } from '../../src/lib/clock.js'
import { UsageLog, type UsageLogOptions } from '../../src/modules/client-keys/usage-log.js'

// The buffer itself, without a database: batching, bounds, retry after a failed write, close.

class RecordingDriver extends DummyDriver {
  fail = false
  readonly queries: CompiledQuery[] = []
  override async acquireConnection(): Promise<DatabaseConnection> {
    return {
      executeQuery: async <R>(q: CompiledQuery): Promise<QueryResult<R>> => {
        if (this.fail) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
        this.queries.push(q)
        return { rows: [] }
      },
      // eslint-disable-next-line require-yield -- never streamed
      streamQuery: async function* () {
        throw new Error('not used')
      },
    }
  }
}

function setup(opts: UsageLogOptions = {}) {
  const driver = new RecordingDriver()
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  })
  const logged: { level: string; obj: object; msg: string }[] = []
  const log = {
    warn: (obj: object, msg: string) => void logged.push({ level: 'warn', obj, msg }),
    error: (obj: object, msg: string) => void logged.push({ level: 'error', obj, msg }),
  }
  const clock = createManualClock(Date.UTC(2030, 0, 1))
  const usage = new UsageLog(db, clock, log, { flushIntervalMs: 60_000, ...opts })
  const inserts = () => driver.queries.filter((q) => q.sql.startsWith('insert'))
  return { driver, usage, logged, inserts, clock }
}

const row = (keyId = '11111111-1111-4111-8111-111111111111') => ({
  tenantId: '22222222-2222-4222-8222-222222222222',
  keyId,
  method: 'GET',
  route: '/api/v1/users',
  statusCode: 200,
  ip: '10.0.0.1',
  origin: null,
  userAgent: null,
  requestId: 'req-1',
})

t.test('rows are written in multi-row batches with last_used_at', async (t) => {
  const { usage, driver, inserts } = setup({ batchRows: 1000 })
  for (let i = 0; i < 2500; i++) usage.record(row())
  await usage.flush()
  t.equal(inserts().length, 3, 'three inserts for 2,500 rows')
  t.equal(driver.queries.filter((q) => q.sql.includes('update client_keys')).length, 3)
  t.same(usage.counters(), { buffered: 0, written: 2500, dropped: 0 })
})

t.test('timestamps strictly increase even on a frozen clock', async (t) => {
  const { usage, inserts } = setup()
  for (let i = 0; i < 3; i++) usage.record(row())
  await usage.flush()
  const stamps = inserts()[0]?.parameters.filter((p) => typeof p === 'string' && /^\d{4}-\d\d-\d\dT/.test(p))
  t.same(stamps, [
    '2030-01-01T00:00:00.000000Z',
    '2030-01-01T00:00:00.000001Z',
    '2030-01-01T00:00:00.000002Z',
  ])
})

t.test('memory is bounded: past maxBuffered new rows are dropped and counted', async (t) => {
  const { usage, logged } = setup({ maxBuffered: 10, batchRows: 100 })
  for (let i = 0; i < 15; i++) usage.record(row())
  t.same(usage.counters(), { buffered: 10, written: 0, dropped: 5 })
  await usage.flush()
  t.ok(logged.some((l) => l.msg.includes('dropped') && (l.obj as { dropped: number }).dropped === 5))
})

t.test('a failed write keeps the rows for the next flush', async (t) => {
  const { usage, driver, logged } = setup()
  driver.fail = true
  for (let i = 0; i < 5; i++) usage.record(row())
  await usage.flush()
  await usage.flush()
  t.same(usage.counters(), { buffered: 5, written: 0, dropped: 0 })
  t.equal(
    logged.filter((l) => l.msg.includes('flush failed')).length,
    1,
    'an outage is logged once, not per tick',
  )
  usage.record(row())
  driver.fail = false
  await usage.flush()
  t.same(usage.counters(), { buffered: 0, written: 6, dropped: 0 })
})

t.test('a full batch is flushed without waiting for the timer', async (t) => {
  const { usage } = setup({ batchRows: 10 })
  for (let i = 0; i < 10; i++) usage.record(row())
  await new Promise((r) => setTimeout(r, 20))
  t.equal(usage.counters().written, 10)
})

t.test('the timer flushes', async (t) => {
  const { usage } = setup({ flushIntervalMs: 30 })
  usage.start()
  usage.record(row())
  await new Promise((r) => setTimeout(r, 150))
  t.equal(usage.counters().written, 1)
  await usage.close()
})

t.test('close writes what is left; later rows are counted as dropped', async (t) => {
  const { usage } = setup()
  usage.start()
  for (let i = 0; i < 7; i++) usage.record(row())
  await usage.close()
  t.same(usage.counters(), { buffered: 0, written: 7, dropped: 0 })
  usage.record(row())
  t.equal(usage.counters().dropped, 1)
})

t.test(
  'close gives up on an unreachable database after a few tries, and says how much was lost',
  async (t) => {
    const { usage, driver, logged } = setup()
    driver.fail = true
    for (let i = 0; i < 4; i++) usage.record(row())
    const started = Date.now()
    await usage.close()
    t.ok(Date.now() - started < 2000, 'bounded')
    t.same(usage.counters(), { buffered: 0, written: 0, dropped: 4 })
    t.ok(logged.some((l) => l.level === 'error' && (l.obj as { lost: number }).lost === 4))
  },
)
