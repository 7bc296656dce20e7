import { AppError } from '../../errors.js'

/** A routing target URL that passed the checks, with what may be shown of it. */
export interface RoutingTarget {
  /** The full URL, credentials included: stored encrypted, never returned or logged. */
  readonly url: string
  readonly host: string
  readonly port: number
  readonly database: string
}

// Why an allowlist of parameters rather than a blocklist: node-postgres reads files for sslcert, sslkey
// and sslrootcert, a `host` parameter would bypass the host allowlist, and new parameters appear with
// new driver versions. These four touch nothing on the server.
const ALLOWED_PARAMS = new Set(['sslmode', 'ssl', 'application_name', 'connect_timeout'])
const SSL_MODES = new Set(['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'])

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
 * (DATABASE_ROUTING_ALLOWED_HOSTS, when set), a database name, and only harmless parameters. Throws
 * DATABASE_ROUTING_FAILED with a message that never repeats the credentials.
 */
export function vetRoutingUrl(raw: string, allowedHosts: readonly string[]): RoutingTarget {
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
  if (!hostAllowed(allowedHosts, host, port)) refuse('The database host is not allowed')
  let database: string
  try {
    database = decodeURIComponent(u.pathname.replace(/^\//, ''))
  } catch {
    return refuse('The database name cannot be decoded')
  }
  if (database === '' || database.includes('/')) refuse('The database URL must name a database')
  for (const [name, value] of u.searchParams) {
    if (!ALLOWED_PARAMS.has(name.toLowerCase())) refuse(`The URL parameter ${name} is not allowed`)
    if (name === 'sslmode' && !SSL_MODES.has(value)) refuse('The URL parameter sslmode has an invalid value')
  }
  if (u.hash !== '') refuse('The database URL must not have a fragment')
  return { url: raw, host, port, database }
}

/** True when two targets name the same database (host, port and name; credentials may differ). */
export function sameDatabase(a: { host: string; port: number; database: string }, b: RoutingTarget): boolean {
  return a.host === b.host && a.port === b.port && a.database === b.database
}
