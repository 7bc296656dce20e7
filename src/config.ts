import { availableParallelism } from 'node:os'
/** Service configuration, read once from the environment (the variables: docs/configuration.md). */
export interface Config {
  readonly nodeEnv: string
  readonly port: number
  readonly host: string
  readonly logLevel: string
  /** `undefined` → embedded PGlite under dataDir; `memory://`; or a postgres:// URL. */
  readonly databaseUrl: string | undefined
  readonly dataDir: string
  readonly databasePoolMax: number
  readonly jwtSecret: string | undefined
  readonly secretsKey: string | undefined
  /**
   * Fastify `trustProxy`: whose X-Forwarded-For is believed. false (unset): nobody's, the socket's
   * address counts; true: every hop's; or a comma-separated list of proxy-addr addresses and ranges.
   */
  readonly trustProxy: boolean | string
  readonly redisUrl: string | undefined
  /** Prefix of every key the service writes to Redis (REDIS_KEY_PREFIX, default `tessera:`). */
  readonly redisKeyPrefix: string
  readonly platformTenantCode: string
  readonly routingAllowedHosts: readonly string[]
  /**
   * OUTBOUND_ALLOWED_HOSTS (contract section 24): hosts, as written in a URL, the service may reach over
   * `http` and at any address (back-channel logout, identity providers); every other must be `https`.
   */
  readonly outboundAllowedHosts: readonly string[]
  readonly corsOrigins: readonly string[]
  readonly bootstrapClientKey: string | undefined
  readonly bootstrapAdminEmail: string | undefined
  readonly bootstrapAdminPassword: string | undefined
  readonly metricsToken: string | undefined
  readonly shutdownTimeoutMs: number
  /** The service's external base URL (no trailing slash): the issuer base of asymmetric tenants. */
  readonly publicUrl: string
  /** Days audit rows are kept; undefined: forever. */
  readonly auditRetentionDays: number | undefined
  /** Days Client Key usage rows are kept. */
  readonly usageRetentionDays: number
  /** Server processes on the one port (node:cluster); 1 runs no cluster. */
  readonly workers: number
  /** SMTP_URL: smtp://, smtps:// or log:// (development); undefined: mail is off (src/modules/email). */
  readonly smtpUrl: string | undefined
  /** MAIL_FROM (`Name <address>`): the sender of every mail; required with smtp(s)://. */
  readonly mailFrom: string | undefined
  /** SIGNUP_CHALLENGE_MAX_NUMBER: the ALTCHA difficulty of sign-ups (the largest number a solver may try). */
  readonly signupChallengeMaxNumber: number
}

type Env = Record<string, string | undefined>

/**
 * WORKERS: a number (1-64) or `auto` (one per core). More than one needs a PostgreSQL server: PGlite
 * (on disk or memory://) belongs to one process.
 */
function workersOf(raw: string | undefined, databaseUrl: string | undefined, problems: string[]): number {
  if (raw === undefined) return 1
  const n = raw === 'auto' ? availableParallelism() : Number(raw)
  if (!Number.isInteger(n) || n < 1 || n > 64) {
    problems.push('WORKERS must be auto or an integer between 1 and 64')
    return 1
  }
  if (n > 1 && !/^postgres(ql)?:\/\//.test(databaseUrl ?? '')) {
    problems.push(
      'WORKERS above 1 needs DATABASE_URL=postgres://... (the embedded database belongs to one process)',
    )
    return 1
  }
  return n
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
const TENANT_CODE = /^[a-z0-9][a-z0-9-]{1,62}[a-z0-9]$/

/** Reads and validates the environment; collects every problem and throws once with all of them. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = []
  const str = (name: string): string | undefined => {
    const v = env[name]?.trim()
    return v === undefined || v === '' ? undefined : v
  }
  const int = (name: string, def: number, min: number, max: number): number => {
    const raw = str(name)
    if (raw === undefined) return def
    const n = Number(raw)
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer between ${min} and ${max}`)
      return def
    }
    return n
  }
  const list = (name: string): string[] =>
    (str(name) ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)

  const nodeEnv = str('NODE_ENV') ?? 'development'
  const logLevel = str('LOG_LEVEL') ?? 'info'
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`)

  const databaseUrl = str('DATABASE_URL')
  if (databaseUrl !== undefined && !/^(memory:\/\/|postgres(ql)?:\/\/)/.test(databaseUrl)) {
    problems.push('DATABASE_URL must be memory:// or a postgres:// URL')
  }

  const jwtSecret = str('JWT_SECRET')
  const secretsKey = str('SECRETS_KEY')
  if (jwtSecret !== undefined && Buffer.byteLength(jwtSecret) < 32)
    problems.push('JWT_SECRET must be at least 32 bytes')
  if (secretsKey !== undefined && Buffer.byteLength(secretsKey) < 32)
    problems.push('SECRETS_KEY must be at least 32 bytes')
  if (nodeEnv === 'production') {
    if (!jwtSecret) problems.push('JWT_SECRET is required when NODE_ENV=production')
    if (!secretsKey) problems.push('SECRETS_KEY is required when NODE_ENV=production')
  }

  // Why no default list: any client on a trusted network could pick its own address (a fresh per-IP
  // budget per request, a forged audit ip). Only the operator knows where its balancer is.
  const rawTrust = str('TRUST_PROXY') ?? 'false'
  const trustProxy = rawTrust === 'true' ? true : rawTrust === 'false' ? false : rawTrust

  const redisKeyPrefix = str('REDIS_KEY_PREFIX') ?? 'tessera:'
  if (!/^[\x21-\x7e]{1,64}$/.test(redisKeyPrefix)) {
    problems.push('REDIS_KEY_PREFIX must be at most 64 printable characters without spaces')
  }

  const platformTenantCode = (str('PLATFORM_TENANT_CODE') ?? 'platform').toLowerCase()
  if (!TENANT_CODE.test(platformTenantCode)) problems.push('PLATFORM_TENANT_CODE is not a valid tenant code')

  const bootstrapClientKey = str('BOOTSTRAP_CLIENT_KEY')
  if (bootstrapClientKey !== undefined && !/^ck_[A-Za-z0-9_-]{43,}$/.test(bootstrapClientKey)) {
    problems.push('BOOTSTRAP_CLIENT_KEY must be ck_ followed by at least 43 base64url characters')
  }
  const bootstrapAdminEmail = str('BOOTSTRAP_ADMIN_EMAIL')
  const bootstrapAdminPassword = env.BOOTSTRAP_ADMIN_PASSWORD || undefined
  if ((bootstrapAdminEmail === undefined) !== (bootstrapAdminPassword === undefined)) {
    problems.push('BOOTSTRAP_ADMIN_EMAIL and BOOTSTRAP_ADMIN_PASSWORD must be set together')
  }

  const corsOrigins = list('CORS_ORIGINS')
  for (const o of corsOrigins) {
    if (!/^https?:\/\/[^/\s]+$/.test(o)) problems.push(`CORS_ORIGINS entry is not an origin: ${o}`)
  }

  const port = int('PORT', 3000, 0, 65535)
  const host = str('HOST') ?? '127.0.0.1'
  const publicUrl = (
    str('PUBLIC_URL') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  ).replace(/\/+$/, '')
  if (!publicUrlAcceptable(publicUrl)) {
    problems.push('PUBLIC_URL must be an http(s) URL without query, fragment or credentials')
  }

  const config: Config = {
    nodeEnv,
    port,
    host,
    logLevel,
    databaseUrl,
    dataDir: str('DATA_DIR') ?? './.data',
    databasePoolMax: int('DATABASE_POOL_MAX', 10, 1, 500),
    jwtSecret,
    secretsKey,
    trustProxy,
    redisUrl: str('REDIS_URL'),
    redisKeyPrefix,
    platformTenantCode,
    routingAllowedHosts: list('DATABASE_ROUTING_ALLOWED_HOSTS').map((h) => h.toLowerCase()),
    outboundAllowedHosts: list('OUTBOUND_ALLOWED_HOSTS').map((h) => h.toLowerCase()),
    corsOrigins,
    bootstrapClientKey,
    bootstrapAdminEmail,
    bootstrapAdminPassword,
    metricsToken: str('METRICS_TOKEN'),
    shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', 10000, 100, 600000),
    publicUrl,
    auditRetentionDays:
      str('AUDIT_RETENTION_DAYS') === undefined ? undefined : int('AUDIT_RETENTION_DAYS', 0, 1, 36500),
    usageRetentionDays: int('USAGE_RETENTION_DAYS', 90, 1, 36500),
    workers: workersOf(str('WORKERS'), databaseUrl, problems),
    // Why 100,000: a browser solves it in well under a second on average (README), a bot pays that per sign-up.
    signupChallengeMaxNumber: int('SIGNUP_CHALLENGE_MAX_NUMBER', 100_000, 100, 10_000_000),
    ...mailConfig(str('SMTP_URL'), str('MAIL_FROM'), nodeEnv, problems),
  }
  if (problems.length > 0) throw new Error(`Invalid configuration:\n- ${problems.join('\n- ')}`)
  return Object.freeze(config)
}

/** SMTP_URL and MAIL_FROM (contract section 18): log:// is for development only. */
function mailConfig(
  smtpUrl: string | undefined,
  mailFrom: string | undefined,
  nodeEnv: string,
  problems: string[],
) {
  if (smtpUrl === undefined) return { smtpUrl, mailFrom }
  if (smtpUrl === 'log://') {
    if (nodeEnv === 'production') problems.push('SMTP_URL=log:// is refused when NODE_ENV=production')
  } else if (!/^smtps?:\/\/[^/\s]+/.test(smtpUrl)) {
    problems.push('SMTP_URL must be smtp://, smtps:// or log://')
  } else if (mailFrom === undefined) {
    problems.push('MAIL_FROM is required with SMTP_URL')
  }
  if (mailFrom !== undefined && !/^([^<>\r\n]*<[^<>\s@]+@[^<>\s@]+>|[^<>\s@]+@[^<>\s@]+)$/.test(mailFrom)) {
    problems.push('MAIL_FROM must be an address or Name <address>')
  }
  return { smtpUrl, mailFrom }
}

/** An http(s) URL with a host and nothing after its path (it is the start of every issuer). */
function publicUrlAcceptable(raw: string): boolean {
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    return false
  }
  return (
    (u.protocol === 'http:' || u.protocol === 'https:') &&
    u.host !== '' &&
    u.search === '' &&
    u.hash === '' &&
    u.username === '' &&
    u.password === '' &&
    !raw.includes('?') &&
    !raw.includes('#')
  )
}
