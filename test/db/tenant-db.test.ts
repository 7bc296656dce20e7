import type { Kysely } from 'kysely'
import t from 'tap'
import type { OpenedDatabase } from '../../src/db/connect.js'
import type { Database } from '../../src/db/database.js'
import { DatabaseRegistry } from '../../src/db/tenant-db.js'

// The registry only passes handles around, so stand-ins are enough here.
const fakeDb = (name: string) => ({ name }) as unknown as Kysely<Database>

function fakeHandle(name: string, total: number, idle: number, waiting = 0) {
  const handle = {
    db: fakeDb(name),
    kind: 'postgres' as const,
    closed: 0,
    up: true,
    ping: async () => {
      if (!handle.up) throw new Error('down')
      return 1
    },
    stats: () => ({ total, idle, waiting }),
    close: async () => void handle.closed++,
  }
  return handle satisfies OpenedDatabase
}

t.test('storeFor answers the main database until a tenant is routed', async (t) => {
  const main = fakeDb('main')
  const reg = new DatabaseRegistry(main, () => ({ total: 4, idle: 3, waiting: 0 }), 'postgres')
  const routed = fakeHandle('a', 2, 1, 1)
  t.equal(reg.storeFor('t1'), main)
  t.same(reg.poolStats(), { pools: 1, tenants: 0, totalConnections: 4, idleConnections: 3, waiting: 0 })

  await reg.route('t1', routed)
  await reg.route('t2', routed)
  t.equal(reg.storeFor('t1'), routed.db)
  t.equal(reg.storeFor('t3'), main)
  t.equal(reg.routedFor('t2'), routed)
  t.same(reg.poolStats(), { pools: 2, tenants: 2, totalConnections: 6, idleConnections: 4, waiting: 1 })

  await reg.unroute('t1')
  t.equal(reg.storeFor('t1'), main)
  t.equal(routed.closed, 0, 'still used by t2')
  await reg.unroute('t2')
  t.equal(routed.closed, 1, 'closed once unused')
})

t.test('routing elsewhere closes the former target; closeAll closes each routed handle once', async (t) => {
  const reg = new DatabaseRegistry(fakeDb('main'), () => ({ total: 1, idle: 1, waiting: 0 }), 'postgres')
  const a = fakeHandle('a', 1, 1)
  const b = fakeHandle('b', 1, 1)
  await reg.route('t1', a)
  await reg.route('t1', b)
  t.equal(a.closed, 1)
  await reg.route('t2', b)
  t.notOk(await reg.anyRoutedDown())
  b.up = false
  t.ok(await reg.anyRoutedDown())
  await reg.closeAll()
  t.equal(b.closed, 1)
  t.same(reg.poolStats(), { pools: 1, tenants: 0, totalConnections: 1, idleConnections: 1, waiting: 0 })
})

t.test(
  'onServer: false for tenants on an embedded main database, true once routed to a server',
  async (t) => {
    const reg = new DatabaseRegistry(fakeDb('main'), () => ({ total: 1, idle: 1, waiting: 0 }), 'pglite')
    t.equal(reg.onServer('t1'), false)
    await reg.route('t1', fakeHandle('a', 1, 1))
    t.equal(reg.onServer('t1'), true)
    t.equal(reg.onServer('t2'), false)
    const onPg = new DatabaseRegistry(fakeDb('main'), () => ({ total: 1, idle: 1, waiting: 0 }), 'postgres')
    t.equal(onPg.onServer('t2'), true)
  },
)
