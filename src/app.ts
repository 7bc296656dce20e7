import Fastify, { type FastifyInstance } from 'fastify'
import { pino } from 'pino'
import type { Config } from './config.js'
import type { AppContext } from './context.js'
import { openDatabase } from './db/connect.js'
import { migrateToLatest } from './db/migrate.js'
import { DatabaseRegistry } from './db/tenant-db.js'
import { systemClock, type Clock } from './lib/clock.js'
import { genReqId } from './plugins/request-id.js'
import requestId from './plugins/request-id.js'
import { AccessLog } from './plugins/access-log.js'
import { clientErrorHandler, frameworkErrors } from './plugins/framework-errors.js'
import errors from './plugins/errors.js'
import validation from './plugins/validation.js'
import docs from './plugins/docs.js'
import securityHeaders from './plugins/security-headers.js'
import shutdown from './plugins/shutdown.js'
import { modules } from './modules/index.js'
import rateLimit from './plugins/rate-limit.js'
import gate from './plugins/gate.js'
import metrics from './plugins/metrics.js'
import keyUsage from './modules/client-keys/usage-plugin.js'
import { ensureSetting } from './modules/system/settings.js'
import { TenantCache } from './modules/tenants/cache.js'
import { Keystore } from './auth/keystore.js'
import { KeyVerifier } from './auth/key-verifier.js'
import { AccessTokenVerifier } from './auth/access-token.js'
import { createPasswordHasher } from './lib/hashing.js'
import { deriveKey } from './lib/crypto-box.js'
import { randomToken } from './lib/tokens.js'
import { bootstrap } from './bootstrap.js'
import { startTenantRouting } from './modules/tenants/routing.js'
import pkg from '../package.json' with { type: 'json' }

export interface AppOptions {
  /** Where logs go (tests capture them); stdout otherwise. */
  readonly logStream?: { write(line: string): void }
  readonly clock?: Clock
  /** Registered before any route, e.g. the tests' contract guard (it needs onRoute). */
  readonly beforeRoutes?: (app: FastifyInstance) => void | Promise<void>
  /** A migrated PGlite data directory to start from (tests: skips creating and migrating PGlite). */
  readonly pgliteDataDir?: Blob
  /** Redis key prefix of the rate-limit counters (tests isolate themselves with it). */
  readonly rateLimitNamespace?: string
  /** Test-only: shorter HTTP server timeouts than HTTP_TIMEOUTS (contract 10 fixes the variables). */
  readonly httpTimeouts?: Partial<HttpTimeouts>
}

/** The HTTP server's timeouts, in milliseconds. */
export interface HttpTimeouts {
  /** The whole request, headers and body, must arrive within it: else 408 and the socket is closed. */
  readonly requestTimeout: number
  /** Its headers must arrive within it (same answer). */
  readonly headersTimeout: number
  /** An idle kept-alive socket is closed after it. */
  readonly keepAliveTimeout: number
  /** A socket with no traffic either way is destroyed after it; 0 is never. */
  readonly connectionTimeout: number
  /** How often Node looks for requests past the first two: they are enforced within this much. */
  readonly connectionsCheckingInterval: number
}

/**
 * Why set at all: Fastify turns Node's request timeout off, so a client that sends its headers (or a
 * Content-Length) and then dribbles, or goes silent, would hold its socket forever (slowloris).
 */
export const HTTP_TIMEOUTS: HttpTimeouts = {
  // Why 30 s: the largest request is 64 KiB (bodyLimit), which even a 3 KB/s client sends in time.
  requestTimeout: 30_000,
  // Why 10 s: headers are at most 16 KiB (Node's limit) and normally arrive in one packet.
  headersTimeout: 10_000,
  // Why 72 s: longer than the 60 s idle timeout of common balancers (AWS ALB, nginx), so the balancer,
  // not us, closes an idle connection, and never sends a request on one we have just closed (a 502).
  keepAliveTimeout: 72_000,
  // Why off: the request and headers timeouts already bound how long a request may take to arrive, and
  // an inactivity timeout would also cut a request whose handler is still working without writing
  // (PUT /tenants/:id/database copies a tenant's data for as long as that takes).
  connectionTimeout: 0,
  // Why 1 s: with Node's default (30 s) a 30 s request timeout could take up to a minute to act.
  connectionsCheckingInterval: 1_000,
}

// Why: these hold credentials; pino replaces them before a line is written.
const REDACT = [
  'req.headers.authorization',
  'req.headers["x-client-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.refreshToken',
  '*.accessToken',
  '*.secret',
  '*.key',
  '*.url',
  'err.config',
]

const URL_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+(:[^/\s@]*)?@/gi

/** Removes `user:password@` from any URL inside a log message. */
export function scrubUrlCredentials(s: string): string {
  return s.replace(URL_CREDENTIALS, '$1[REDACTED]@')
}

/** Builds the whole service (database, plugins, modules) without listening. Close it with app.close(). */
export async function buildApp(config: Config, options: AppOptions = {}): Promise<FastifyInstance> {
  const timeouts = { ...HTTP_TIMEOUTS, ...options.httpTimeouts }
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: REDACT, censor: '[REDACTED]' },
      // Why asynchronous: a synchronous write per line cost ~40% of the hot routes' throughput at `info`;
      // lines that arrive while a write is in flight go out together in the next one, and pino
      // flushes what is pending when the process exits. Why maxLength: when stdout is slower than the
      // log rate, lines past 16 MB pending are dropped rather than growing memory without bound.
      stream: options.logStream ?? pino.destination({ dest: 1, sync: false, maxLength: 16 * 1024 * 1024 }),
      serializers: {
        req: (req: { method: string; url: string; id: string; ip?: string }) => ({
          method: req.method,
          // Why: query strings may carry secrets pasted by mistake; the path is enough to debug. Why not
          // `url`: the redaction of `*.url` (connection strings) would hide it.
          path: req.url.split('?')[0],
          id: req.id,
          ip: req.ip,
        }),
        err: (err: Error & { code?: string }) => ({
          type: err.name,
          code: err.code,
          message: scrubUrlCredentials(err.message ?? ''),
          stack: scrubUrlCredentials(err.stack ?? ''),
        }),
      },
    },
    genReqId,
    logController: new AccessLog(),
    bodyLimit: 64 * 1024,
    trustProxy: config.trustProxy,
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
    requestTimeout: timeouts.requestTimeout,
    keepAliveTimeout: timeouts.keepAliveTimeout,
    connectionTimeout: timeouts.connectionTimeout,
    // Why here: Fastify has no option for these; Node reads them (and checks headers <= request) when
    // it creates the server. requireHostHeader: the errors plugin answers a missing Host in the envelope.
    http: {
      requestTimeout: timeouts.requestTimeout,
      headersTimeout: timeouts.headersTimeout,
      connectionsCheckingInterval: timeouts.connectionsCheckingInterval,
      requireHostHeader: false,
    },
    // Errors raised before any hook runs (router, HTTP parser, timeouts) answer in the envelope too.
    frameworkErrors,
    clientErrorHandler,
  })

  const opened = await openDatabase(config.databaseUrl, {
    dataDir: config.dataDir,
    poolMax: config.databasePoolMax,
    logger: app.log,
    // Why these bounds: a database that stops answering must become a 503 within 5 s (contract 11).
    connectionTimeoutMillis: 4000,
    queryTimeoutMillis: 4500,
    ...(options.pgliteDataDir ? { loadDataDir: options.pgliteDataDir } : {}),
  })
  try {
    const applied = await migrateToLatest(opened.db)
    if (applied.length > 0) app.log.info({ migrations: applied }, 'migrations applied')
  } catch (err) {
    await opened.close()
    throw err
  }
  const dbs = new DatabaseRegistry(opened.db, opened.stats, opened.kind)
  const clock = options.clock ?? systemClock
  // Why: outside production an unset secret is generated once and kept, so restarts keep tokens valid.
  const jwtSecret = config.jwtSecret ?? (await ensureSetting(opened.db, 'jwt_secret', () => randomToken(32)))
  const secretsKey = deriveKey(
    config.secretsKey ?? (await ensureSetting(opened.db, 'secrets_key', () => randomToken(32))),
  )
  const hasher = createPasswordHasher({ cost: 12 })
  const tenants = new TenantCache(opened.db, config.platformTenantCode)
  const keystore = new Keystore(opened.db, Buffer.from(jwtSecret, 'utf8'), secretsKey, clock)
  const ctx: AppContext = {
    config,
    dbs,
    pingMain: opened.ping,
    clock,
    startedAt: Date.now(),
    version: pkg.version,
    tenants,
    keystore,
    tokens: new AccessTokenVerifier(keystore, tenants),
    keys: new KeyVerifier(opened.db, config.platformTenantCode, clock),
    hasher,
    secretsKey,
    redisStatus: () => 'disabled',
  }
  await bootstrap(opened.db, config, hasher)
  app.decorate('ctx', ctx)
  app.addHook('onClose', async () => {
    await hasher.close()
    await dbs.closeAll()
    await opened.close()
  })
  // Routed tenants' queries must reach their own databases from the first request on.
  try {
    await startTenantRouting(app)
  } catch (err) {
    await app.close()
    throw err
  }

  await app.register(requestId)
  // Why this order: the shutdown 503 is sent from an onRequest hook, after the security headers'.
  await app.register(securityHeaders, { corsOrigins: config.corsOrigins })
  await app.register(shutdown)
  await app.register(validation)
  await app.register(errors)
  await app.register(rateLimit, { redisUrl: config.redisUrl, namespace: options.rateLimitNamespace })
  await app.register(gate)
  await app.register(metrics)
  // Why here: its onResponse hook must exist before the route modules are registered (see the plugin).
  await app.register(keyUsage)
  if (options.beforeRoutes) await options.beforeRoutes(app)
  await app.register(docs)
  for (const mod of modules) await app.register(mod)
  return app
}
