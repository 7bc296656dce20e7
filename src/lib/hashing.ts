import { randomBytes } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { hash as bcryptHash, verify as bcryptVerify } from '@node-rs/bcrypt'

// How the work leaves the event loop: @node-rs/bcrypt and @node-rs/argon2 are napi-rs bindings whose
// async functions run as napi async work, i.e. on the libuv threadpool (UV_THREADPOOL_SIZE threads,
// default 4, read once when the pool first starts). That pool is shared with fs, dns.lookup, zlib and
// async crypto. So we never hand libuv more hashes than we want running: the rest wait in our own
// queue, where they cost nothing and stay countable (queueDepth), and a dns.lookup or file read waits
// behind at most one hash instead of the whole login backlog.
// Sizing: one running hash per core uses every core; more only adds latency. On the 2-core machines
// here that is 2 of the 4 libuv threads. On a machine with more cores than threads, raise
// UV_THREADPOOL_SIZE in the environment (before the process starts) to at least cores + 2.

/** The bcrypt cost every new hash gets (login and register, openapi/paths/auth.yaml). */
export const BCRYPT_COST = 12

/**
 * A fixed bcrypt cost-12 hash of a random password that was thrown away, so dummyVerify costs what a
 * real verify costs and always fails. Why a literal: computing one at startup would cost 250 ms.
 */
export const DUMMY_BCRYPT_HASH = '$2b$12$vgM/7AOQjNqhPen2rROQeOeK3cf8DJkbAcW9KVxmWcHnyZyxMCZI6'

const BCRYPT_RE = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/
const ARGON2_RE = /^\$argon2(id|i)\$/
const MAX_PASSWORD_BYTES = 72
// Why caps on stored parameters: an imported hash chooses its own cost. Without a ceiling one row with
// bcrypt cost 31 or argon2 m=4 GiB turns each login attempt into hours of CPU or an out-of-memory kill.
const MAX_VERIFY_BCRYPT_COST = 16
const MAX_ARGON2_MEMORY_KIB = 256 * 1024
const MAX_ARGON2_TIME_COST = 10
const MAX_ARGON2_PARALLELISM = 16

/** Outcome of a verify: `needsRehash` asks the caller to store a fresh hash of the same password. */
export interface VerifyResult {
  ok: boolean
  needsRehash: boolean
}

/** Hashes and verifies passwords off the event loop, at most `concurrency` at a time. */
export interface PasswordHasher {
  /** A bcrypt `$2b$` hash at the configured cost. Throws RangeError for passwords over 72 UTF-8 bytes. */
  hash(password: string): Promise<string>
  /** Checks bcrypt ($2a$/$2b$/$2y$, cost 4..16) and argon2id/argon2i hashes; never throws for bad hashes. */
  verify(password: string, storedHash: string): Promise<VerifyResult>
  /** Spends one verify at the configured cost against a fixed hash and fails; for unknown identifiers. */
  dummyVerify(password: string): Promise<false>
  /** Operations running plus waiting (the bcrypt queue-depth gauge). */
  queueDepth(): number
  /** How many hashes run at once. */
  readonly concurrency: number
  /** The bcrypt cost of new hashes and of the unknown-identifier verify. */
  readonly cost: number
  /** Refuses new work and resolves once queued and running work has finished. */
  close(): Promise<void>
}

/** Options of createPasswordHasher. */
export interface PasswordHasherOptions {
  /** bcrypt cost for new hashes and the cost below or above which needsRehash is true (default 12). */
  cost?: number
  /** Hashes running at once (default: the cores, capped by UV_THREADPOOL_SIZE). */
  concurrency?: number
}

/** Default number of hashes to run at once: one per core, but never more than libuv has threads. */
export function defaultHashConcurrency(): number {
  const pool = Number(process.env.UV_THREADPOOL_SIZE)
  const threads = Number.isInteger(pool) && pool > 0 ? pool : 4
  return Math.max(1, Math.min(availableParallelism(), threads))
}

/** Creates the password hasher. Needs no setup; the dummy hash for a non-12 cost is made on first use. */
export function createPasswordHasher(options: PasswordHasherOptions = {}): PasswordHasher {
  const cost = options.cost ?? BCRYPT_COST
  if (!Number.isInteger(cost) || cost < 4 || cost > MAX_VERIFY_BCRYPT_COST) {
    throw new RangeError(`bcrypt cost must be an integer in 4..${MAX_VERIFY_BCRYPT_COST}`)
  }
  const concurrency = options.concurrency ?? defaultHashConcurrency()
  const gate = new Gate(concurrency)
  let dummyHash: Promise<string> | undefined =
    cost === BCRYPT_COST ? Promise.resolve(DUMMY_BCRYPT_HASH) : undefined

  const bcrypt2b = async (password: string): Promise<string> => {
    // @node-rs/bcrypt writes `$2y$`. For the same salt and a password of at most 72 bytes, $2y$ and $2b$
    // are the same computation (checked against bcryptjs), so relabelling gives bcryptjs-style hashes.
    // Not genSalt(12, '2b') + hash(pw, 12, salt): its `salt` argument is 16 raw bytes, and a salt
    // string passed there is used byte-for-byte, i.e. mostly the constant text `$2b$12$`.
    const h = await bcryptHash(password, cost)
    return h.startsWith('$2y$') ? '$2b$' + h.slice(4) : h
  }

  const dummy = async (password: string): Promise<false> => {
    dummyHash ??= gate.run(() => bcrypt2b(randomPassword()))
    const h = await dummyHash
    await gate.run(() => bcryptVerify(password, h).catch(() => false))
    return false
  }

  return {
    concurrency,
    cost,
    hash(password) {
      if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) {
        return Promise.reject(new RangeError('password longer than 72 bytes cannot be hashed with bcrypt'))
      }
      return gate.run(() => bcrypt2b(password))
    },
    async verify(password, storedHash) {
      // Why: bcrypt compares only the first 72 bytes, so a longer password would log in on its prefix.
      // It never logs in, whatever the stored format, and costs one dummy compare like any failure.
      if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES)
        return { ok: await dummy(password), needsRehash: false }
      const b = typeof storedHash === 'string' ? BCRYPT_RE.exec(storedHash) : null
      const storedCost = b === null ? 0 : Number(b[1])
      if (storedCost >= 4 && storedCost <= MAX_VERIFY_BCRYPT_COST) {
        const ok = await gate.run(() => bcryptVerify(password, storedHash).catch(() => false))
        return { ok, needsRehash: ok && storedCost !== cost }
      }
      const argon2 = typeof storedHash === 'string' && ARGON2_RE.test(storedHash) ? await loadArgon2() : null
      if (argon2 && argon2WithinLimits(argon2, storedHash)) {
        const ok = await gate.run(() => argon2.verify(storedHash, password).catch(() => false))
        return { ok, needsRehash: ok }
      }
      // Unknown format or costs beyond the caps: spend what a real verify spends, so the state of the
      // stored row does not show in the response time.
      await dummy(password)
      return { ok: false, needsRehash: false }
    },
    dummyVerify: dummy,
    queueDepth: () => gate.depth(),
    close: () => gate.close(),
  }
}

/**
 * Measures raw bcrypt cost-12 verifies per second on this machine: `concurrency` (default: the cores)
 * verifies kept in flight for `durationMs`, through the native binding with no queue of ours. The auth
 * benchmark prints it as the ceiling for login throughput.
 */
export async function rawBcryptComparesPerSecond(
  durationMs: number,
  concurrency: number = availableParallelism(),
): Promise<number> {
  let count = 0
  const start = performance.now()
  const deadline = start + durationMs
  const loop = async () => {
    while (performance.now() < deadline) {
      await bcryptVerify('not the password', DUMMY_BCRYPT_HASH)
      count++
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop))
  return count / ((performance.now() - start) / 1000)
}

/** The cost of a bcrypt hash, or null when `storedHash` is not one. */
export function bcryptCostOf(storedHash: string): number | null {
  const m = BCRYPT_RE.exec(storedHash)
  return m === null ? null : Number(m[1])
}

type Argon2 = typeof import('@node-rs/argon2')
let argon2Module: Promise<Argon2> | undefined
// Why lazy: only imported users carry argon2 hashes; the binding costs ~12 MB of RSS otherwise.
const loadArgon2 = (): Promise<Argon2> => (argon2Module ??= import('@node-rs/argon2'))

function argon2WithinLimits(argon2: Argon2, storedHash: string): boolean {
  try {
    const o = argon2.parseOptions(storedHash)
    return (
      o.memoryCost <= MAX_ARGON2_MEMORY_KIB &&
      o.timeCost <= MAX_ARGON2_TIME_COST &&
      o.parallelism <= MAX_ARGON2_PARALLELISM
    )
  } catch {
    return false
  }
}

function randomPassword(): string {
  return randomBytes(24).toString('base64url')
}

/** A counting semaphore with a FIFO queue; `close` waits for everything admitted so far. */
class Gate {
  private running = 0
  private readonly waiting: Array<() => void> = []
  private closed = false
  private drained: (() => void) | undefined
  private closing: Promise<void> | undefined

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('concurrency must be a positive integer')
  }

  depth(): number {
    return this.running + this.waiting.length
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.closed) throw new Error('password hasher is closed')
    if (this.running < this.limit) this.running++
    else await new Promise<void>((resolve) => this.waiting.push(resolve))
    try {
      return await task()
    } finally {
      this.release()
    }
  }

  close(): Promise<void> {
    this.closed = true
    this.closing ??=
      this.depth() === 0
        ? Promise.resolve()
        : new Promise((resolve) => {
            this.drained = resolve
          })
    return this.closing
  }

  private release(): void {
    // Hand the slot straight to the next waiter, so `running` never dips and a newcomer cannot overtake.
    const next = this.waiting.shift()
    if (next !== undefined) next()
    else this.running--
    if (this.depth() === 0) this.drained?.()
  }
}
