import { mkdirSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import type { Database } from './database.js'
import { PGliteDialect } from './pglite-dialect.js'

export interface PoolStats {
  total: number
  idle: number
  waiting: number
}

export interface OpenedDatabase {
  readonly db: Kysely<Database>
  readonly kind: 'pglite' | 'memory' | 'postgres'
  /** Round trip in ms; throws when the database does not answer. */
  ping(): Promise<number>
  stats(): PoolStats
  close(): Promise<void>
}

interface Logger {
  warn(obj: object, msg: string): void
}

// Why global: pg's type parsers are process-wide. count(*) and other int8 fit a JS number here.
pg.types.setTypeParser(20, (v) => Number(v))

/** Answers within 5 s or fails: a database failure must become a 503 quickly, never a hang. */
const CONNECT_TIMEOUT_MS = 5000

/** Opens a pg pool for a postgres:// URL (also used for routed tenant databases). */
export function openPostgres(url: string, opts: { poolMax?: number; logger?: Logger } = {}): OpenedDatabase {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolMax ?? 10,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    // Why: a statement stuck behind a lost server must not hold a request past the 5 s promise.
    query_timeout: 15_000,
  })
  pool.on('error', (err) => opts.logger?.warn({ err: { message: err.message } }, 'idle database client error'))
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  let closed = false
  return {
    db,
    kind: 'postgres',
    ping: () => timedPing(db),
    stats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: async () => {
      if (closed) return
      closed = true
      await db.destroy()
    },
  }
}

async function timedPing(db: Kysely<Database>): Promise<number> {
  const start = performance.now()
  await sql`select 1`.execute(db)
  return Math.round((performance.now() - start) * 100) / 100
}

/**
 * Opens the main database: PGlite on disk under dataDir (url unset), PGlite in memory (`memory://`),
 * or PostgreSQL (`postgres://`).
 */
export async function openDatabase(
  url: string | undefined,
  opts: { dataDir: string; poolMax?: number; logger?: Logger },
): Promise<OpenedDatabase> {
  if (url?.startsWith('postgres://') || url?.startsWith('postgresql://')) return openPostgres(url, opts)
  const memory = url === 'memory://'
  if (!memory) mkdirSync(opts.dataDir, { recursive: true })
  const pglite = new PGlite(memory ? undefined : opts.dataDir, { parsers: { 20: (v: string) => Number(v) } })
  await pglite.waitReady
  const dialect = new PGliteDialect(pglite)
  const db = new Kysely<Database>({ dialect })
  let closed = false
  return {
    db,
    kind: memory ? 'memory' : 'pglite',
    ping: () => timedPing(db),
    stats: () => ({ total: 1, idle: dialect.driver?.waiting ? 0 : 1, waiting: dialect.driver?.waiting ?? 0 }),
    close: async () => {
      if (closed) return
      closed = true
      await db.destroy()
    },
  }
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT', 'ECONNRESET', 'EPIPE', 'EAI_AGAIN', 'EHOSTUNREACH'])
const UNAVAILABLE_MESSAGES = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /connection timeout/i,
  /Client has encountered a connection error/i,
  /PGlite is closed/i,
  /Query read timeout/i,
  /the database system is (starting up|shutting down)/i,
  /Cannot use a pool after calling end/i,
]

/** True when an error means the database could not be reached (→ 503), not that a query was wrong. */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown }
  const code = typeof e.code === 'string' ? e.code : ''
  if (UNAVAILABLE_CODES.has(code) || code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code)) {
    return true
  }
  const message = typeof e.message === 'string' ? e.message : ''
  if (UNAVAILABLE_MESSAGES.some((re) => re.test(message))) return true
  if (Array.isArray(e.errors) && e.errors.some(isDatabaseUnavailable)) return true
  return e.cause !== undefined && e.cause !== err && isDatabaseUnavailable(e.cause)
}
