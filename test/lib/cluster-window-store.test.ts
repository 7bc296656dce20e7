import t from 'tap'
import { EventEmitter } from 'node:events'
import {
  ClusterWindowClient,
  serveWindowCounters,
  type ClusterLike,
  type PrimaryChannel,
  type WorkerLike,
} from '../../src/lib/cluster-window-store.js'

// The primary's counters and the workers' client, over an in-process stand-in for node:cluster's IPC
// (messages cloned through JSON, as the real channel serialises them). The real thing across processes:
// test/system/workers.test.ts.

/** A primary and `n` workers joined by cloned messages; `down` stops the primary answering. */
function fakeCluster(n: number) {
  const primary = new EventEmitter()
  let down = false
  const workers = Array.from({ length: n }, () => {
    const channel = new EventEmitter()
    const worker: WorkerLike = {
      send(message, callback) {
        setImmediate(() => {
          channel.emit('message', JSON.parse(JSON.stringify(message)))
          callback?.(null)
        })
        return true
      },
    }
    const toPrimary: PrimaryChannel = {
      send(message, callback) {
        if (!down) setImmediate(() => primary.emit('message', worker, JSON.parse(JSON.stringify(message))))
        callback?.(null)
        return true
      },
      on: (e, l) => channel.on(e, l),
      off: (e, l) => channel.off(e, l),
    }
    return toPrimary
  })
  return {
    cluster: primary as unknown as ClusterLike,
    workers,
    stopAnswering: () => (down = true),
  }
}

t.test('one address gets one count across every worker', async (t) => {
  const { cluster, workers } = fakeCluster(3)
  const stop = serveWindowCounters(cluster)
  t.teardown(stop)
  const clients = workers.map((w) => new ClusterWindowClient(w))
  t.teardown(() => clients.forEach((c) => c.close()))
  const counts: number[] = []
  for (let i = 0; i < 9; i++) counts.push((await clients[i % 3]!.hit('login', 60_000, '203.0.113.1')).current)
  t.same(counts, [1, 2, 3, 4, 5, 6, 7, 8, 9])
  t.equal((await clients[0]!.hit('global', 60_000, '203.0.113.1')).current, 1, 'each store counts apart')
  t.equal((await clients[1]!.hit('login', 60_000, '203.0.113.2')).current, 1, 'each address counts apart')
  const hit = await clients[2]!.hit('login', 60_000, '203.0.113.1')
  t.ok(hit.ttlMs > 59_000 && hit.ttlMs <= 60_000, `the window's time left: ${hit.ttlMs} ms`)
  t.equal(hit.overflow, false)
})

t.test('hits made in one turn travel as one message and each gets its own answer', async (t) => {
  const { cluster, workers } = fakeCluster(1)
  const asked: unknown[] = []
  ;(cluster as unknown as EventEmitter).on('message', (_w: unknown, m: unknown) => asked.push(m))
  t.teardown(serveWindowCounters(cluster))
  const client = new ClusterWindowClient(workers[0]!)
  t.teardown(() => client.close())
  const hits = await Promise.all(
    Array.from({ length: 20 }, () => client.hit('global', 60_000, '198.51.100.1')),
  )
  t.same(
    hits.map((h) => h.current),
    Array.from({ length: 20 }, (_, i) => i + 1),
  )
  t.equal(asked.length, 1, 'one message for twenty hits')
})

t.test('the primary bounds its memory as the local store does', async (t) => {
  const { cluster, workers } = fakeCluster(1)
  t.teardown(serveWindowCounters(cluster, { maxKeys: 2 }))
  const client = new ClusterWindowClient(workers[0]!)
  t.teardown(() => client.close())
  await client.hit('global', 60_000, 'a')
  await client.hit('global', 60_000, 'b')
  const third = await client.hit('global', 60_000, 'c')
  t.equal(third.overflow, true, 'a newcomer past the bound shares the overflow counter')
})

t.test('a primary that does not answer, or no primary at all: the hit fails in bounded time', async (t) => {
  const { cluster, workers, stopAnswering } = fakeCluster(1)
  t.teardown(serveWindowCounters(cluster))
  const client = new ClusterWindowClient(workers[0]!, 50)
  t.teardown(() => client.close())
  stopAnswering()
  const started = Date.now()
  await t.rejects(client.hit('login', 60_000, 'x'), /did not answer within 50 ms/)
  t.ok(Date.now() - started < 1000)

  const orphan = new ClusterWindowClient({ on: () => undefined, off: () => undefined })
  await t.rejects(orphan.hit('login', 60_000, 'x'), /not a cluster worker/)
  orphan.close()

  const closedChannel = new ClusterWindowClient({
    send: () => {
      throw new Error('channel closed')
    },
    on: () => undefined,
    off: () => undefined,
  })
  await t.rejects(closedChannel.hit('login', 60_000, 'x'), /channel closed/)
  const waiting = new ClusterWindowClient({ send: () => true, on: () => undefined, off: () => undefined })
  const pending = waiting.hit('login', 60_000, 'x')
  await new Promise((r) => setImmediate(r))
  waiting.close()
  await t.rejects(pending, /closed/, 'close fails what is still waiting')
})

t.test('messages of other protocols on the channel are left alone', async (t) => {
  const { cluster, workers } = fakeCluster(1)
  t.teardown(serveWindowCounters(cluster))
  ;(cluster as unknown as EventEmitter).emit('message', { send: () => t.fail('answered') }, { hello: 1 })
  const channel = new EventEmitter()
  const client = new ClusterWindowClient({
    send: (m, cb) => workers[0]!.send!(m, cb),
    on: (e, l) => channel.on(e, l),
    off: (e, l) => channel.off(e, l),
  })
  t.teardown(() => client.close())
  channel.emit('message', { hello: 1 })
  channel.emit('message', { t: 'tessera:window-counters', r: [[999, 1, 1, 0]] })
  t.pass('a foreign message and an answer nobody waits for are ignored')
})
