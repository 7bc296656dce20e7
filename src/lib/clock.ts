/** A source of the current time in epoch milliseconds; services take one so tests can control expiry. */
export interface Clock {
  now(): number
}

/** The real wall clock. */
export const systemClock: Clock = { now: () => Date.now() }

/** A clock that only moves when told to; for tests. */
export interface ManualClock extends Clock {
  /** Moves the clock forward (or back, with a negative value) by `ms`. */
  advance(ms: number): void
  /** Sets the clock to an absolute epoch-millisecond value. */
  set(ms: number): void
}

/** Creates a clock frozen at `startMs` (default: the real time at creation) that moves only on request. */
export function createManualClock(startMs: number = Date.now()): ManualClock {
  let current = startMs
  return {
    now: () => current,
    advance: (ms) => {
      current += ms
    },
    set: (ms) => {
      current = ms
    },
  }
}
