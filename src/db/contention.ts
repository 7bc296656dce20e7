import { setTimeout as sleep } from 'node:timers/promises'
import { AppError } from '../errors.js'

/** SQLSTATEs that mean "lost a race, nothing was written, try again": deadlock and serialisation failure. */
const CONTENTION_CODES = new Set(['40P01', '40001'])

/** Retries after the first attempt (docs/decisions.md D9: "retried at most 3 times"). */
export const CONTENTION_RETRIES = 3

/** True for a deadlock (40P01) or a serialisation failure (40001), from pg or PGlite. */
export function isContention(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined
  return typeof code === 'string' && CONTENTION_CODES.has(code)
}

/**
 * Runs `attempt` (a whole transaction or one statement, never a part of a caller's transaction: the
 * database rolled it back entirely) and runs it again when it lost to a deadlock or a serialisation
 * failure, at most CONTENTION_RETRIES times. Still losing after that is 503 SERVICE_UNAVAILABLE, never a 500.
 */
export async function retryOnContention<T>(attempt: () => Promise<T>): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await attempt()
    } catch (err) {
      if (!isContention(err)) throw err
      if (retry >= CONTENTION_RETRIES) {
        throw Object.assign(new AppError('SERVICE_UNAVAILABLE', 'Busy, try again'), { cause: err })
      }
      // Why jitter: two transactions that deadlocked once would meet again if both retried at once.
      await sleep(Math.random() * 10 * (retry + 1))
    }
  }
}
