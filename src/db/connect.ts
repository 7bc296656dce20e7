import { createHash } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import type { Database } from './database.js'
import { lockDataDir, type DataDirLock } from './data-dir-lock.js'
import { prepareDataDir, tightenDataDir } from './data-dir-mode.js'
import { PGliteDialect } from './pglite-dialect.js'

export type DatabaseKind = 'pglite' | 'memory' | 'postgres'

/** Connection-pool numbers (PGlite reports its single connection the same way). */
export interface PoolStats {
  total: number
  idle: number
  waiting: number
}

/** An open database: the Kysely handle plus what health, metrics and shutdown need. */
export interface OpenedDatabase {
  readonly db: Kysely<Database>
  readonly kind: DatabaseKind
  /** Round trip of `select 1` in ms (two decimals); throws (an unavailable error) when it does not answer. */
  ping(): Promise<number>
  stats(): PoolStats
  /** Destroys the Kysely instance and its pool or PGlite; safe to call twice. */
  close(): Promise<void>
}

/** The part of a pino/Fastify logger this module uses. */
export interface DatabaseLogger {
  warn(obj: object, msg: string): void
}

export interface PostgresOptions {
  /** Pool size; default 10. */
  readonly poolMax?: number
  readonly logger?: DatabaseLogger
  /** Give up connecting after this long; default 5,000 ms. */
  readonly connectionTimeoutMillis?: number
  /** Client-side limit per query (pg `query_timeout`); default 15,000 ms. */
  readonly queryTimeoutMillis?: number
  /** ping() gives up after this long; default 4,000 ms, so health answers within 5 s. */
  readonly pingTimeoutMillis?: number
}

export interface OpenDatabaseOptions extends PostgresOptions {
  /** PGlite's data directory lives in `<dataDir>/pgdata` when no URL is given. */
  readonly dataDir: string
  /** PGlite only: start from a dump (`pglite.dumpDataDir()`), e.g. a migrated test template. */
  readonly loadDataDir?: Blob | File
  /** PGlite only: how long a query waits for the single connection; default 15,000 ms. */
  readonly pgliteAcquireTimeoutMillis?: number
}

/** Thrown by ping() when the database does not answer in time; counts as unavailable. */
export class DatabaseTimeoutError extends Error {
  readonly code = 'ETIMEDOUT'
  constructor(ms: number) {
    super(`database did not answer within ${ms} ms`)
    this.name = 'DatabaseTimeoutError'
  }
}

const INT8_OID = 20

// Why per pool and not pg.types: the global parsers would change every pg user in the process.
// count(*) and other int8 values come back as JS numbers (they fit: row counts, not money); timestamptz
// already comes back as Date.
const pgTypes = new pg.TypeOverrides()
pgTypes.setTypeParser(INT8_OID, (v: string) => Number(v))

/**
 * Makes a client run parameterised statements as named prepared statements (one per distinct SQL text
 * and connection). Why: the hot queries (GET /me's grants union, the refresh rotation) spend more time
 * in PostgreSQL's planner than in execution; a prepared statement is parsed once per connection and
 * soon runs on a cached plan. The SQL texts come from our code, so their number is bounded.
 */
function usePreparedStatements(client: pg.PoolClient): void {
  const names = new Map<string, string>()
  const original = client.query.bind(client) as (...args: unknown[]) => unknown
  ;(client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const [text, values, callback] = args
    if (typeof text !== 'string' || !Array.isArray(values) || values.length === 0 || callback !== undefined) {
      return original(...args)
    }
    let name = names.get(text)
    if (name === undefined) {
      name = `tessera_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`
      names.set(text, name)
    }
    return original({ name, text, values })
  }
}

/**
 * Every connection field given explicitly (routed tenant databases): with no URL, pg takes nothing
 * from PG* variables or ~/.pgpass for the fields set here.
 */
export type PostgresConnection = Pick<
  pg.PoolConfig,
  'user' | 'password' | 'host' | 'port' | 'database' | 'ssl' | 'application_name' | 'stream'
>

/**
 * Opens a pool on a postgres:// URL (the main database) or on explicit connection fields (a routed
 * tenant database). Never throws on open.
 */
export function openPostgres(
  target: string | PostgresConnection,
  opts: PostgresOptions = {},
): OpenedDatabase {
  const pool = new pg.Pool({
    ...(typeof target === 'string' ? { connectionString: target } : target),
    max: opts.poolMax ?? 10,
    connectionTimeoutMillis: opts.connectionTimeoutMillis ?? 5000,
    // Why: a server that stops answering mid-query (paused, partitioned) must not hold a request forever.
    query_timeout: opts.queryTimeoutMillis ?? 15_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    types: pgTypes,
  })
  // Why both listeners: an idle client's error is emitted on the pool, a checked-out client's on the client,
  // and an 'error' event nobody listens to crashes the process. The failing query rejects on its own.
  pool.on('error', (err) => opts.logger?.warn({ err: describe(err) }, 'database client error (idle)'))
  pool.on('connect', (client) => {
    client.on('error', () => undefined)
    usePreparedStatements(client)
  })
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  const stats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount })
  // Why the extra end(): Kysely skips the driver's destroy when no query ever ran.
  return handle(db, 'postgres', opts.pingTimeoutMillis, stats, () => (pool.ended ? undefined : pool.end()))
}

/**
 * Opens the main database: PGlite on disk under dataDir (url undefined), PGlite in memory (`memory://`),
 * or a PostgreSQL pool (`postgres://`, `postgresql://`). Does not migrate; see migrateToLatest.
 */
export async function openDatabase(
  url: string | undefined,
  opts: OpenDatabaseOptions,
): Promise<OpenedDatabase> {
  if (url !== undefined && /^postgres(ql)?:\/\//.test(url)) return openPostgres(url, opts)
  if (url !== undefined && url !== 'memory://')
    throw new Error('database URL must be memory:// or postgres://')
  const memory = url === 'memory://'
  let dir: string | undefined
  // Why before opening: a second process on one directory would silently lose one side's writes.
  let lock: DataDirLock | undefined
  if (!memory) {
    // Why first: the lock file and every file PGlite creates are then the service user's alone.
    await prepareDataDir(opts.dataDir, opts.logger)
    lock = await lockDataDir(opts.dataDir)
    dir = join(opts.dataDir, 'pgdata')
    await mkdir(dir, { recursive: true, mode: 0o700 })
  }
  try {
    // Why lazy: a service on PostgreSQL never loads the embedded engine.
    const { PGlite } = await import('@electric-sql/pglite')
    const pglite = await PGlite.create(dir, {
      parsers: { [INT8_OID]: (v: string) => Number(v) },
      ...(opts.loadDataDir ? { loadDataDir: opts.loadDataDir } : {}),
    })
    // Why after create: a new data directory comes out of PGlite's image with files of mode 0666.
    if (!memory) {
      await tightenDataDir(opts.dataDir).catch(async (err: unknown) => {
        await pglite.close()
        throw err
      })
    }
    const dialect = new PGliteDialect({ pglite, acquireTimeoutMs: opts.pgliteAcquireTimeoutMillis })
    const db = new Kysely<Database>({ dialect })
    const stats = () => dialect.stats()
    // Why the extra close(): Kysely skips the driver's destroy when no query ever ran.
    return handle(db, memory ? 'memory' : 'pglite', opts.pingTimeoutMillis, stats, async () => {
      if (!pglite.closed) await pglite.close()
      await lock?.release()
    })
  } catch (err) {
    await lock?.release()
    throw err
  }
}

function handle(
  db: Kysely<Database>,
  kind: DatabaseKind,
  pingTimeoutMs = 4000,
  stats: () => PoolStats,
  release: () => Promise<void> | undefined,
): OpenedDatabase {
  let closing: Promise<void> | undefined
  return {
    db,
    kind,
    ping: () => ping(db, pingTimeoutMs),
    stats,
    close: () => (closing ??= db.destroy().then(release)),
  }
}

async function ping(db: Kysely<Database>, timeoutMs: number): Promise<number> {
  const start = performance.now()
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DatabaseTimeoutError(timeoutMs)), timeoutMs)
  })
  try {
    await Promise.race([sql`select 1`.execute(db), timeout])
  } finally {
    clearTimeout(timer)
  }
  return Math.round((performance.now() - start) * 100) / 100
}

function describe(err: Error & { code?: unknown }): object {
  // Why not the whole error: pg errors may carry connection parameters.
  return { message: err.message, code: err.code }
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'ETIMEDOUT',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'PGLITE_BUSY',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down)
  '57P04', // database_dropped
  '53300', // too_many_connections
  '3D000', // invalid_catalog_name: the database is gone
])

const UNAVAILABLE_MESSAGES = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Client has encountered a connection error and is not queryable/i,
  /Connection ended unexpectedly/i,
  /Query read timeout/i,
  /Cannot use a pool after calling end on the pool/i,
  /PGlite is closed/i,
  /driver has already been destroyed/i,
]

/**
 * True when an error means the database could not be reached (answer 503 SERVICE_UNAVAILABLE), not that
 * a query was wrong. Follows `cause` and AggregateError members.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  return unavailable(err, 0)
}

function unavailable(err: unknown, depth: number): boolean {
  if (typeof err !== 'object' || err === null || depth > 5) return false
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown }
  const code = typeof e.code === 'string' ? e.code : ''
  // SQLSTATE class 08: connection exceptions.
  if (UNAVAILABLE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true
  const message = typeof e.message === 'string' ? e.message : ''
  if (UNAVAILABLE_MESSAGES.some((re) => re.test(message))) return true
  if (Array.isArray(e.errors) && e.errors.some((x) => unavailable(x, depth + 1))) return true
  return e.cause !== undefined && unavailable(e.cause, depth + 1)
}
