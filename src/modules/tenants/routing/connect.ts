import { createHash } from 'node:crypto'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { DatabaseTimeoutError, type DatabaseLogger, type OpenedDatabase } from '../../../db/connect.js'
import type { Database } from '../../../db/database.js'
import { checkedSocket, systemResolver, type Resolver } from './address.js'
import type { RoutedConnection } from './url.js'

export interface RoutedPoolOptions {
  readonly poolMax: number
  readonly connectionTimeoutMillis: number
  /** Client-side limit per query; default 15,000 ms. */
  readonly queryTimeoutMillis?: number
  /** ping() gives up after this long; default 4,000 ms. */
  readonly pingTimeoutMillis?: number
  readonly logger?: DatabaseLogger
  /**
   * Refuse loopback, link-local and unspecified addresses (DATABASE_ROUTING_ALLOWED_HOSTS unset): every
   * connection resolves the host and connects to the address it checked.
   */
  readonly checkAddresses: boolean
  /** Tests only: answers in place of dns.lookup. */
  readonly resolve?: Resolver
}

const INT8_OID = 20
// Why per pool: the global parsers would change every pg user in the process (as in db/connect.ts).
const pgTypes = new pg.TypeOverrides()
pgTypes.setTypeParser(INT8_OID, (v: string) => Number(v))

/**
 * Opens a pool on a routed tenant database with every connection field given explicitly, so nothing
 * comes from PGUSER, PGPASSWORD, ~/.pgpass, PGHOST, PGPORT, PGDATABASE or PGSSLMODE. Never throws on
 * open; connection failures surface on the first query.
 */
export function openRoutedDatabase(conn: RoutedConnection, opts: RoutedPoolOptions): OpenedDatabase {
  const resolve = opts.resolve ?? systemResolver
  const password = conn.password
  const pool = new pg.Pool({
    user: conn.user,
    // Why a function: pg replaces a falsy password with PGPASSWORD or ~/.pgpass; a function's answer is
    // sent as it is, even ''.
    password: () => password,
    host: conn.host,
    port: conn.port,
    database: conn.database,
    ssl: conn.ssl,
    application_name: conn.applicationName,
    ...(opts.checkAddresses ? { stream: () => checkedSocket(resolve) } : {}),
    max: opts.poolMax,
    connectionTimeoutMillis: opts.connectionTimeoutMillis,
    query_timeout: opts.queryTimeoutMillis ?? 15_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    types: pgTypes,
  })
  pool.on('error', (err: Error & { code?: unknown }) =>
    opts.logger?.warn(
      { err: { message: err.message, code: err.code } },
      'routed database client error (idle)',
    ),
  )
  pool.on('connect', (client) => {
    client.on('error', () => undefined)
    usePreparedStatements(client)
  })
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  const pingTimeoutMs = opts.pingTimeoutMillis ?? 4000
  let closing: Promise<void> | undefined
  return {
    db,
    kind: 'postgres',
    ping: async () => {
      const start = performance.now()
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new DatabaseTimeoutError(pingTimeoutMs)), pingTimeoutMs)
      })
      try {
        await Promise.race([sql`select 1`.execute(db), timeout])
      } finally {
        clearTimeout(timer)
      }
      return Math.round((performance.now() - start) * 100) / 100
    },
    stats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    // Why the extra end(): Kysely skips the driver's destroy when no query ever ran.
    close: () => (closing ??= db.destroy().then(() => (pool.ended ? undefined : pool.end()))),
  }
}

/**
 * Parameterised statements become named prepared statements (one per SQL text and connection), as
 * db/connect.ts does for the main pool: the hot queries spend more time planning than executing.
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
