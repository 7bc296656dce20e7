import type { ConnectionOptions } from 'node:tls'
import { AppError } from '../../../errors.js'

/**
 * Every field a routed connection uses, taken from the URL alone. Why: `pg` fills a missing user,
 * password, host, port, database or sslmode from PGUSER, PGPASSWORD (or ~/.pgpass), PGHOST, PGPORT,
 * PGDATABASE and PGSSLMODE, which are the service's own; a routed database must never get them.
 */
export interface RoutedConnection {
  readonly user: string
  /** Never logged; '' only for a route stored before passwords were required (sent as '', never looked up). */
  readonly password: string
  /** The name as written; every connection resolves it and connects to the address it checked. */
  readonly host: string
  readonly port: number
  readonly database: string
  /** false (no TLS) unless the URL asks for it; never PGSSLMODE. */
  readonly ssl: false | ConnectionOptions
  readonly applicationName: string
}

/** A routing target URL that passed the checks, with what may be shown of it. */
export interface RoutingTarget {
  /** The full URL, credentials included: stored encrypted, never returned or logged. */
  readonly url: string
  readonly host: string
  readonly port: number
  readonly database: string
  readonly connection: RoutedConnection
}

// Why an allowlist of parameters rather than a blocklist: node-postgres reads files for sslcert, sslkey
// and sslrootcert, a `host` parameter would bypass the host allowlist, and new parameters appear with
// new driver versions. These four touch nothing on the server.
const ALLOWED_PARAMS = new Set(['sslmode', 'ssl', 'application_name', 'connect_timeout'])
const SSL_MODES = new Set(['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'])
const SSL_FLAGS = new Set(['true', '1', 'false', '0'])

const refuse = (message: string): never => {
  throw new AppError('DATABASE_ROUTING_FAILED', message)
}

/** True when `host` (lowercase, no brackets) matches an entry: exact, `host:port`, or `*.suffix`. */
export function hostAllowed(allowed: readonly string[], host: string, port: number): boolean {
  if (allowed.length === 0) return true
  return allowed.some((entry) => {
    const e = entry.toLowerCase().replace(/^\[(.+)\](:\d+)?$/, '$1$2')
    if (e === host || e === `${host}:${port}`) return true
    return e.startsWith('*.') && host.endsWith(e.slice(1)) && host.length > e.length - 1
  })
}

/**
 * Parses and vets a `PUT /tenants/:id/database` URL: postgres scheme, a network host on the allowlist
 * (DATABASE_ROUTING_ALLOWED_HOSTS, when set), a user, a password and a database name, and only harmless
 * parameters. Throws DATABASE_ROUTING_FAILED with a message that never repeats the credentials.
 * Where the host's addresses may point is checked when connecting (address.ts).
 */
export function vetRoutingUrl(raw: string, allowedHosts: readonly string[]): RoutingTarget {
  const target = parseRoutingUrl(raw)
  if (!hostAllowed(allowedHosts, target.host, target.port)) refuse('The database host is not allowed')
  if (target.connection.password === '')
    refuse('The database URL must carry a password; none is taken from the server environment')
  return target
}

/**
 * Parses a route stored earlier (already vetted when it was set). A password may be missing from routes
 * stored before one was required: it is sent empty, never looked up. Throws like vetRoutingUrl.
 */
export function storedRoutingTarget(raw: string): RoutingTarget {
  return parseRoutingUrl(raw)
}

function parseRoutingUrl(raw: string): RoutingTarget {
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    return refuse('The database URL cannot be parsed')
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
    refuse('The database URL must be postgres://')
  const host = u.hostname.toLowerCase().replace(/^\[(.+)\]$/, '$1')
  // Why: an empty or percent-encoded host is how a URL names a Unix socket path on this server.
  if (host === '' || /[%/\\\s]/.test(host)) refuse('The database URL must name a network host')
  const port = u.port === '' ? 5432 : Number(u.port)
  if (!Number.isInteger(port) || port < 1 || port > 65535) refuse('The database URL has an invalid port')
  const user = decode(u.username, 'The database user cannot be decoded')
  if (user === '') refuse('The database URL must name a user; none is taken from the server environment')
  const password = decode(u.password, 'The database password cannot be decoded')
  const database = decode(u.pathname.replace(/^\//, ''), 'The database name cannot be decoded')
  if (database === '' || database.includes('/')) refuse('The database URL must name a database')
  for (const [name, value] of u.searchParams) {
    if (!ALLOWED_PARAMS.has(name)) refuse(`The URL parameter ${name} is not allowed`)
    if (name === 'sslmode' && !SSL_MODES.has(value)) refuse('The URL parameter sslmode has an invalid value')
    if (name === 'ssl' && !SSL_FLAGS.has(value)) refuse('The URL parameter ssl has an invalid value')
  }
  if (u.hash !== '') refuse('The database URL must not have a fragment')
  const connection: RoutedConnection = {
    user,
    password,
    host,
    port,
    database,
    ssl: sslOf(u.searchParams),
    applicationName: u.searchParams.get('application_name') || 'tessera',
  }
  // Why not enumerable: a target that reaches a log line must not carry the password there.
  Object.defineProperty(connection, 'password', { enumerable: false })
  return { url: raw, host, port, database, connection }
}

function decode(s: string, message: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return refuse(message)
  }
}

/**
 * TLS as node-postgres reads the same URL (sslmode first, then ssl), except that no parameter means no
 * TLS rather than PGSSLMODE. Every mode that asks for TLS verifies the server, as pg does; `no-verify`
 * does not.
 */
function sslOf(params: URLSearchParams): false | ConnectionOptions {
  const mode = params.get('sslmode')
  if (mode !== null) {
    if (mode === 'disable') return false
    return mode === 'no-verify' ? { rejectUnauthorized: false } : {}
  }
  const flag = params.get('ssl')
  return flag === 'true' || flag === '1' ? {} : false
}

/** True when two targets name the same database (host, port and name; credentials may differ). */
export function sameDatabase(a: { host: string; port: number; database: string }, b: RoutingTarget): boolean {
  return a.host === b.host && a.port === b.port && a.database === b.database
}
