import t from 'tap'
import { TtlCache } from '../../src/lib/ttl-cache.js'

/** A load whose answer the test hands over when it chooses. */
function deferred<V>() {
  let resolve!: (v: V) => void
  let reject!: (e: Error) => void
  const promise = new Promise<V>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

t.test('TtlCache', async (t) => {
  let now = 0
  const cache = () => new TtlCache<string, string>(2000, 2, () => now)

  t.test('loads once for concurrent callers, then answers from memory until the lifetime ends', async (t) => {
    const c = cache()
    let loads = 0
    const load = async () => `v${++loads}`
    t.same(await Promise.all([c.get('a', load), c.get('a', load)]), ['v1', 'v1'])
    now += 1999
    t.equal(await c.get('a', load), 'v1')
    now += 1
    t.equal(await c.get('a', load), 'v2')
  })

  t.test('a load that started before a delete answers its callers but is not kept', async (t) => {
    for (const all of [false, true]) {
      const c = cache()
      const old = deferred<string>()
      const first = c.get('a', () => old.promise)
      c.delete(all ? undefined : 'a')
      const fresh = c.get('a', async () => 'new')
      old.resolve('old')
      t.equal(await first, 'old')
      t.equal(await fresh, 'new')
      t.equal(await c.get('a', async () => 'third'), 'new', 'the fresh answer is the one kept')
    }
  })

  t.test('a failed load is not kept, and the next caller loads again', async (t) => {
    const c = cache()
    const d = deferred<string>()
    const p = c.get('a', () => d.promise)
    d.reject(new Error('down'))
    await t.rejects(p, /down/)
    t.equal(await c.get('a', async () => 'ok'), 'ok')
  })

  t.test('a failed load after a delete does not disturb the next one', async (t) => {
    const c = cache()
    const d = deferred<string>()
    const p = c.get('a', () => d.promise)
    c.delete('a')
    const next = deferred<string>()
    const q = c.get('a', () => next.promise)
    d.reject(new Error('down'))
    await t.rejects(p, /down/)
    next.resolve('fresh')
    t.equal(await q, 'fresh')
    t.equal(await c.get('a', async () => 'other'), 'fresh')
  })

  t.test('bounded: the oldest entry goes first', async (t) => {
    const c = cache()
    await c.get('a', async () => 'A')
    await c.get('b', async () => 'B')
    await c.get('c', async () => 'C')
    t.equal(await c.get('a', async () => 'A2'), 'A2')
    t.equal(await c.get('c', async () => 'C2'), 'C')
  })
})
