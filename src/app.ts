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
