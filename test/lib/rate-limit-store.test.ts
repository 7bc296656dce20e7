import t from 'tap'
import { runInNewContext } from 'node:vm'
import { setFlagsFromString } from 'node:v8'
import { LOCAL_MAX_KEYS, WindowCounterStore } from '../../src/lib/rate-limit-store.js'

const WINDOW = 60_000

/** A store on a hand-driven clock, with no background sweep. */
function storeAt(maxKeys?: number) {
  const clock = { now: 1_000 }
  const store = new WindowCounterStore({
    windowMs: WINDOW,
    maxKeys,
    now: () => clock.now,
    sweepIntervalMs: 0,
  })
  return { store, clock }
}

/** The n-th distinct IPv4 address (n < 2^24). */
const v4 = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`

/** Limits `key` (6 hits against a budget of 5) and returns its last count. */
function limit(store: WindowCounterStore, key: string): number {
  let current = 0
  for (let i = 0; i < 6; i++) current = store.hit(key).current
  return current
}

t.test('WindowCounterStore: counts within a window of 60 s from the first request', async (t) => {
  const { store, clock } = storeAt()
  t.same(store.hit('a'), { current: 1, ttlMs: WINDOW, overflow: false })
  clock.now += 59_000
  t.same(store.hit('a'), { current: 2, ttlMs: 1_000, overflow: false }, 'same window')
  t.equal(store.hit('b').current, 1, 'keys count apart')
  clock.now += 1_000
  t.same(store.hit('a'), { current: 1, ttlMs: WINDOW, overflow: false }, 'a new window once it ended')
})

t.test('WindowCounterStore: a flood of 10,000 new addresses leaves a limited address limited', async (t) => {
  for (const maxKeys of [LOCAL_MAX_KEYS, 1_000]) {
    const { store, clock } = storeAt(maxKeys)
    const limited = '203.0.113.5'
    t.equal(limit(store, limited), 6, `limited before the flood (bound ${maxKeys})`)
    for (let i = 0; i < 10_000; i++) {
      clock.now += 1
      store.hit(v4(i))
    }
    t.ok(store.size <= maxKeys, `never more than ${maxKeys} keys (${store.size})`)
    const after = store.hit(limited)
    t.equal(after.current, 7, `still counted on its own window after the flood (bound ${maxKeys})`)
    t.equal(after.overflow, false)
  }
})

t.test('WindowCounterStore: at the bound, new addresses share one overflow budget', async (t) => {
  const { store, clock } = storeAt(3)
  for (const k of ['a', 'b', 'c']) store.hit(k)
  t.equal(store.size, 3)
  const shared = ['x', 'y', 'z', 'x', 'w', 'v'].map((k) => store.hit(k))
  t.same(
    shared.map((h) => h.current),
    [1, 2, 3, 4, 5, 6],
    'every address not yet counted is counted on one counter',
  )
  t.ok(
    shared.every((h) => h.overflow),
    'all on the overflow counter',
  )
  t.equal(store.size, 3, 'no key added')
  t.same(store.hit('a'), { current: 2, ttlMs: WINDOW, overflow: false }, 'a counted address keeps its own')
  clock.now += 30_000
  t.same(store.hit('q'), { current: 7, ttlMs: 30_000, overflow: true }, 'the overflow window runs 60 s')
  clock.now += 30_000
  const fresh = store.hit('x')
  t.same(fresh, { current: 1, ttlMs: WINDOW, overflow: false }, 'room again once the windows ended')
  t.equal(store.size, 1, 'the ended windows were freed to make room')
})

t.test('WindowCounterStore: the overflow counter starts its own window when it ends', async (t) => {
  const { store, clock } = storeAt(1)
  store.hit('a')
  clock.now += 10_000
  t.equal(store.hit('x').current, 1)
  clock.now += 40_000
  t.equal(store.hit('a').current, 2, 'a is still live')
  clock.now += 10_000 // a's window has ended; x's overflow window has not
  t.same(store.hit('y'), { current: 1, ttlMs: WINDOW, overflow: false }, 'a freed, y counted on its own')
  t.same(store.hit('z'), { current: 2, ttlMs: 10_000, overflow: true }, 'the overflow window still runs')
  clock.now += 10_000
  t.same(store.hit('z'), { current: 1, ttlMs: WINDOW, overflow: true }, 'then a new overflow window')
})

t.test('WindowCounterStore: sweep frees exactly the ended windows, in window order', async (t) => {
  const { store, clock } = storeAt()
  store.hit('a') // window 1,000 .. 61,000
  clock.now += 10_000
  store.hit('b') // 11,000 .. 71,000
  clock.now += 51_000 // 62,000: a ended
  store.hit('a') // a starts again at 62,000 and moves behind b
  clock.now += 5_000 // 67,000
  t.equal(store.sweep(), 0, 'nothing ended: a restarted, b runs')
  clock.now += 5_000 // 72,000: b ended
  t.equal(store.sweep(), 1, 'b freed')
  t.equal(store.size, 1)
  t.equal(store.hit('a').current, 2, 'a kept its count')
  clock.now += WINDOW
  t.equal(store.sweep(), 1)
  t.equal(store.size, 0, 'everything freed once every window ended')
})

t.test(
  'WindowCounterStore: the background sweep frees ended windows and keeps no process alive',
  async (t) => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
    const refTimers = timers()
    const store = new WindowCounterStore({ windowMs: 20, sweepIntervalMs: 10 })
    t.teardown(() => store.close())
    t.equal(timers(), refTimers, "the sweep timer is unref'd")
    for (let i = 0; i < 100; i++) store.hit(v4(i))
    t.equal(store.size, 100)
    const deadline = Date.now() + 5_000
    while (store.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    t.equal(store.size, 0, 'freed without any request')
  },
)

t.test('WindowCounterStore: memory at the bound', async (t) => {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  gc()
  gc()
  const before = process.memoryUsage()
  // Both budgets' stores full, as the plugin keeps them: IPv4 subjects in one, IPv6 /64s in the other.
  const global = new WindowCounterStore({ windowMs: WINDOW, sweepIntervalMs: 0 })
  const login = new WindowCounterStore({ windowMs: WINDOW, sweepIntervalMs: 0 })
  const started = performance.now()
  for (let i = 0; i < LOCAL_MAX_KEYS + 10_000; i++) {
    global.hit(v4(i))
    login.hit(`2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::/64`)
  }
  const ms = performance.now() - started
  gc()
  gc()
  const after = process.memoryUsage()
  t.equal(global.size, LOCAL_MAX_KEYS, 'the bound holds')
  t.equal(login.size, LOCAL_MAX_KEYS, 'the bound holds')
  const mb = (n: number) => (n / 1024 / 1024).toFixed(1)
  const keys = global.size + login.size
  t.comment(
    `two stores at the bound (${keys} keys): heap +${mb(after.heapUsed - before.heapUsed)} MiB, ` +
      `rss +${mb(after.rss - before.rss)} MiB, ` +
      `${Math.round((after.heapUsed - before.heapUsed) / keys)} bytes a key; ` +
      `${2 * (LOCAL_MAX_KEYS + 10_000)} hits in ${ms.toFixed(0)} ms`,
  )
  t.ok(after.heapUsed - before.heapUsed < 100 * 1024 * 1024, 'sanity: well under 100 MiB of heap')
  // Why: keep both stores reachable until measured.
  t.ok(global.hit('x') && login.hit('x'))
})
