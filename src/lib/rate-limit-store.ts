// Fixed-window request counters kept in this process: the store behind a budget when Redis is not
// configured or not answering (docs/decisions.md D6).
//
// Why not an LRU (what @fastify/rate-limit's LocalStore is): under a flood of new addresses an LRU
// evicts the counter of an address that is already limited and so hands it a fresh budget. Here a
// counter is never dropped while its window runs. Memory is bounded at admission instead: once
// `maxKeys` windows are live, an address not yet counted is counted on the one overflow counter that
// every such address shares, so memory pressure never hands out a fresh budget, it only makes
// newcomers share one.
//
// Why a Map in insertion order: a window starts when its key is inserted (a key whose window ended is
// deleted and inserted again when it starts the next one), so the Map is ordered by window start and,
// all windows being one length, by window end. Freeing expired windows walks from the head and stops at
// the first live one: cost proportional to what is freed, never a scan of the live keys.

/**
 * Live windows one store holds at most (the memory bound). The rate-limit plugin keeps one store per
 * budget (all routes, login), so an instance holds at most twice this many counters: about 155 bytes a
 * key, measured at 15 MiB of heap (15 to 24 MiB of RSS) for both stores full (printed by
 * test/lib/rate-limit-store.test.ts). Sized so that an instance sees 50,000 distinct clients a minute
 * before newcomers share.
 */
export const LOCAL_MAX_KEYS = 50_000

/** How often expired windows are freed when no request frees them first. */
const SWEEP_INTERVAL_MS = 10_000

export interface WindowHit {
  /** Requests counted in this window, the current one included. */
  current: number
  /** Milliseconds until the window ends. */
  ttlMs: number
  /** True when the request was counted on the shared overflow counter (the store was full). */
  overflow: boolean
}

export interface WindowStoreOptions {
  /** Window length; a window starts at the first request it counts. */
  windowMs: number
  /** Live windows held at most; default LOCAL_MAX_KEYS. */
  maxKeys?: number
  /** Monotonic milliseconds; default performance.now (wall-clock jumps neither extend nor end windows). */
  now?: () => number
  /** Period of the background sweep of expired windows; 0 disables it (tests). */
  sweepIntervalMs?: number
}

interface Counter {
  start: number
  count: number
}

/** Per-key fixed-window counters with a hard bound on live keys and one shared overflow counter. */
export class WindowCounterStore {
  readonly windowMs: number
  readonly maxKeys: number
  private readonly now: () => number
  private readonly counters = new Map<string, Counter>()
  private readonly overflow: Counter = { start: 0, count: 0 }
  private readonly sweeper: NodeJS.Timeout | undefined

  constructor(opts: WindowStoreOptions) {
    this.windowMs = opts.windowMs
    this.maxKeys = Math.max(1, opts.maxKeys ?? LOCAL_MAX_KEYS)
    this.now = opts.now ?? (() => Math.floor(performance.now()))
    const every = opts.sweepIntervalMs ?? SWEEP_INTERVAL_MS
    if (every > 0) {
      this.sweeper = setInterval(() => this.sweep(), every)
      // Why: an idle store must not keep the process alive.
      this.sweeper.unref()
    }
  }

  /** Live windows held now (expired ones not yet freed included); never more than maxKeys. */
  get size(): number {
    return this.counters.size
  }

  /**
   * Counts one request of `key`. A key already counted keeps its own window until it ends, whatever
   * else arrives; a key not yet counted while the store is full is counted on the overflow counter.
   */
  hit(key: string): WindowHit {
    const now = this.now()
    const c = this.counters.get(key)
    if (c !== undefined) {
      if (now - c.start < this.windowMs) return this.count(c, now, false)
      // Why delete first: the new window goes to the tail, keeping the Map in window order.
      this.counters.delete(key)
    } else if (this.counters.size >= this.maxKeys) {
      this.sweep(now)
      if (this.counters.size >= this.maxKeys) {
        const o = this.overflow
        if (o.count === 0 || now - o.start >= this.windowMs) {
          o.start = now
          o.count = 0
        }
        return this.count(o, now, true)
      }
    }
    this.counters.set(key, { start: now, count: 1 })
    return { current: 1, ttlMs: this.windowMs, overflow: false }
  }

  /** Frees every window that has ended; returns how many. */
  sweep(now: number = this.now()): number {
    let freed = 0
    for (const [key, c] of this.counters) {
      if (now - c.start < this.windowMs) break
      this.counters.delete(key)
      freed++
    }
    return freed
  }

  /** Stops the background sweep; the counters stay usable. */
  close(): void {
    if (this.sweeper) clearInterval(this.sweeper)
  }

  private count(c: Counter, now: number, overflow: boolean): WindowHit {
    c.count++
    return { current: c.count, ttlMs: c.start + this.windowMs - now, overflow }
  }
}
