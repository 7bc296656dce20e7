import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { Config } from './config.js'
import type { AppContext } from './context.js'
import { openDatabase, type OpenedDatabase } from './db/connect.js'
import { migrateToLatest } from './db/migrate.js'
import type { Clock } from './lib/clock.js'
import { closeContext, createContext } from './app/create-context.js'
import { createLogger, requestLogger } from './app/logger.js'
import { genReqId } from './plugins/request-id.js'
import requestId from './plugins/request-id.js'
import { AccessLog } from './plugins/access-log.js'
import { clientErrorHandler, frameworkErrors } from './plugins/framework-errors.js'
import errors from './plugins/errors.js'
import validation from './plugins/validation.js'
import docs from './plugins/docs.js'
import consolePages from './plugins/console.js'
import securityHeaders from './plugins/security-headers.js'
import signupCors from './plugins/signup-cors.js'
import shutdown from './plugins/shutdown.js'
import rateLimit from './plugins/rate-limit.js'
import gate from './plugins/gate.js'
import metrics from './plugins/metrics.js'
import { modules } from './modules/index.js'
import keyUsage from './modules/client-keys/usage-plugin.js'
import adminEvents from './modules/audit/admin-events-plugin.js'
import { bootstrap } from './modules/system/bootstrap.js'
import { reconcileAuditRetention, sweepOnce } from './modules/system/retention.js'

export interface AppOptions {
  /** Where logs go (tests capture them); stdout otherwise. */
  readonly logStream?: { write(line: string): void }
  readonly clock?: Clock
  /** Registered before any route, e.g. the tests' contract guard (it needs onRoute). */
  readonly beforeRoutes?: (app: FastifyInstance) => void | Promise<void>
  /** A migrated PGlite data directory to start from (tests: skips creating and migrating PGlite). */
  readonly pgliteDataDir?: Blob
  /** Test-only: shorter HTTP server timeouts than HTTP_TIMEOUTS (the variables: docs/configuration.md). */
  readonly httpTimeouts?: Partial<HttpTimeouts>
  /**
   * Test-only: the bcrypt cost of new hashes and of the unknown-identifier verify, 12 unless set. Tests of
   * anything but hashing run at 4: a verify at 12 costs ~250 ms of CPU, and the suite makes thousands.
   * Not a variable: no deployment may lower it.
   */
  readonly passwordCost?: number
  /** Test-only: the built console's folder (default: found by consoleDist); null: as if not built. */
  readonly consoleRoot?: string | null
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

/**
 * Builds the whole service without listening: open (the main database, migrated) → context (secrets,
 * verifiers, routing; bootstrap; routes restored) → register (plugins, then the modules' routes).
 * Close it with app.close().
 */
export async function buildApp(config: Config, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = createServer(config, options)
  const opened = await open(config, app.log, options)
  const ctx = await createContext(config, opened, {
    clock: options.clock,
    log: app.log,
    passwordCost: options.passwordCost,
  })
  await bootstrap(opened.db, config, ctx.hasher)
  app.decorate('ctx', ctx)
  app.addHook('onClose', async () => {
    await closeContext(ctx)
    await opened.close()
  })
  await startRouting(app, ctx)
  await startRetention(app, ctx)
  await register(app, config, options)
  return app
}

/** The Fastify instance: logger, request ids, body limit, proxy trust and the HTTP timeouts. */
function createServer(config: Config, options: AppOptions): FastifyInstance {
  const timeouts = { ...HTTP_TIMEOUTS, ...options.httpTimeouts }
  return Fastify({
    logger: createLogger(config, options.logStream),
    genReqId,
    logController: new AccessLog(),
    childLoggerFactory: requestLogger,
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
}

/** Opens the main database and applies pending migrations (closing it again when they fail). */
async function open(config: Config, log: FastifyBaseLogger, options: AppOptions): Promise<OpenedDatabase> {
  const opened = await openDatabase(config.databaseUrl, {
    dataDir: config.dataDir,
    poolMax: config.databasePoolMax,
    logger: log,
    // Why these bounds: a database that stops answering must become a 503 within 5 s (docs/decisions.md D1).
    connectionTimeoutMillis: 4000,
    queryTimeoutMillis: 4500,
    ...(options.pgliteDataDir ? { loadDataDir: options.pgliteDataDir } : {}),
  })
  try {
    const applied = await migrateToLatest(opened.db)
    if (applied.length > 0) log.info({ migrations: applied }, 'migrations applied')
  } catch (err) {
    await opened.close()
    throw err
  }
  return opened
}

/** Routed tenants' queries must reach their own databases from the first request on. */
async function startRouting(app: FastifyInstance, ctx: AppContext): Promise<void> {
  try {
    await ctx.routing.start()
  } catch (err) {
    await app.close()
    throw err
  }
  app.addHook('preClose', () => ctx.routing.stop())
}

/** How often the retention pass runs, and its first run after start. */
const RETENTION_EVERY_MS = 10 * 60_000
const RETENTION_FIRST_MS = 60_000

/**
 * Sets (or checks) each database's audit retention period at once, then runs the retention pass
 * (src/modules/system/retention.ts) a minute after start and every 10 minutes; a pass in flight is
 * awaited at close, before the database goes.
 */
async function startRetention(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await reconcileAuditRetention(ctx, app.log)
  let running: Promise<unknown> = Promise.resolve()
  const pass = () => {
    running = sweepOnce(ctx, { log: app.log })
      .then((counts) => {
        if (counts && Object.values(counts).some((n) => n > 0))
          app.log.info({ retention: counts }, 'retention pass')
      })
      .catch((err: unknown) => app.log.warn({ err }, 'retention pass failed; the next one tries again'))
  }
  const first = setTimeout(pass, RETENTION_FIRST_MS)
  const every = setInterval(pass, RETENTION_EVERY_MS)
  first.unref()
  every.unref()
  app.addHook('preClose', async () => {
    clearTimeout(first)
    clearInterval(every)
    await running
  })
}

/** Plugins in their order, then every module's routes. */
async function register(app: FastifyInstance, config: Config, options: AppOptions): Promise<void> {
  await app.register(requestId)
  // Why this order: the shutdown 503 is sent from an onRequest hook, after the security headers'.
  await app.register(securityHeaders, { corsOrigins: config.corsOrigins })
  await app.register(signupCors)
  await app.register(shutdown)
  await app.register(validation)
  await app.register(errors)
  await app.register(rateLimit, {
    redisUrl: config.redisUrl,
    redisKeyPrefix: config.redisKeyPrefix,
    clusterWorker: config.workers > 1,
  })
  await app.register(gate)
  // Why after the gate: its preValidation hook must see only requests the gate let through to validation.
  await app.register(adminEvents)
  await app.register(metrics)
  // Why here: its onResponse hook must exist before the route modules are registered (see the plugin).
  await app.register(keyUsage)
  if (options.beforeRoutes) await options.beforeRoutes(app)
  await app.register(docs)
  await app.register(consolePages, { root: options.consoleRoot })
  for (const mod of modules) await app.register(mod)
}
