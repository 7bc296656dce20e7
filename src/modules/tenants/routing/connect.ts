import { openPostgres, type DatabaseLogger, type OpenedDatabase } from '../../../db/connect.js'
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

/**
 * Opens a pool on a routed tenant database with every connection field given explicitly, so nothing
 * comes from PGUSER, PGPASSWORD, ~/.pgpass, PGHOST, PGPORT, PGDATABASE or PGSSLMODE. Never throws on
 * open; connection failures surface on the first query.
 */
export function openRoutedDatabase(conn: RoutedConnection, opts: RoutedPoolOptions): OpenedDatabase {
  const resolve = opts.resolve ?? systemResolver
  const password = conn.password
  return openPostgres(
    {
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
    },
    opts,
  )
}
