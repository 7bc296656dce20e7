import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'
import type { AppContext } from '../context.js'
import type { OpenedDatabase } from '../db/connect.js'
import { DatabaseRegistry } from '../db/tenant-db.js'
import { localChannel, PgChangeChannel, type ChangeMessage } from '../db/change-channel.js'
import { systemClock, type Clock } from '../lib/clock.js'
import { deriveKey } from '../lib/crypto-box.js'
import { BCRYPT_COST, createPasswordHasher } from '../lib/hashing.js'
import { randomToken } from '../lib/tokens.js'
import { connectRedis } from '../lib/redis.js'
import { AccessTokenVerifier } from '../security/access-token.js'
import { KeyVerifier } from '../security/key-verifier.js'
import { Keystore } from '../security/keystore.js'
import { refreshTokenTenant } from '../modules/sessions/refresh-token.js'
import { liveSessionLogin } from '../modules/sessions/queries.js'
import { findKeyByHash } from '../modules/client-keys/auth-queries.js'
import { ensureSetting } from '../modules/system/queries.js'
import { TenantCache } from '../modules/tenants/cache.js'
import { signingLookup } from '../modules/tenants/secret-queries.js'
import { TenantRouting } from '../modules/tenants/routing/tenant-routing.js'
import { Lockout } from '../modules/account/lockout.js'
import { DbThrottleStore, RedisThrottleStore } from '../modules/account/throttle-store.js'
import { DbUsedSolutions, RedisUsedSolutions } from '../modules/publishable-keys/challenge.js'
import { PublishableKeyVerifier } from '../modules/publishable-keys/verifier.js'
import pkg from '../../package.json' with { type: 'json' }

export interface ContextOptions {
  readonly clock?: Clock
  /** Where routing and the routed pools log. */
  readonly log: FastifyBaseLogger
  /** The bcrypt cost of new hashes (default BCRYPT_COST, 12); see AppOptions.passwordCost. */
  readonly passwordCost?: number
}

/** Where the account-throttling counters live: Redis with REDIS_URL (shared by every instance), else the database. */
async function createLockout(config: Config, opened: OpenedDatabase, options: ContextOptions) {
  if (!config.redisUrl) return new Lockout(new DbThrottleStore(opened.db), options.log)
  // Why 200 ms: a login waits for its identifier's count at most this long before going on without it.
  const redis = await connectRedis(config.redisUrl, 200)
  // Why the configured prefix: deployments that share one Redis must not share counters.
  const store = new RedisThrottleStore(redis, `${config.redisKeyPrefix}lockout:`)
  return new Lockout(store, options.log, {
    connected: () => redis.status === 'ready',
    close: () => redis.disconnect(),
  })
}

/** Where used sign-up solutions are recorded: Redis (SET NX, falling back to the database), else the database. */
async function createUsedSolutions(config: Config, opened: OpenedDatabase) {
  const db = new DbUsedSolutions(opened.db)
  if (!config.redisUrl) return db
  const redis = await connectRedis(config.redisUrl, 200)
  // Why the configured prefix: deployments that share one Redis must not share used solutions.
  return new RedisUsedSolutions(redis, `${config.redisKeyPrefix}altcha-used:`, db)
}

/**
 * Builds the context every module and plugin uses, on a migrated main database: the signing and
 * secrets keys (outside production generated once and kept), the password hasher, the tenant cache,
 * the credential verifiers with the lookups they need, and tenant routing (not started: see
 * `ctx.routing.start`). Close it with closeContext, then close `opened`.
 */
export async function createContext(
  config: Config,
  opened: OpenedDatabase,
  options: ContextOptions,
): Promise<AppContext> {
  const dbs = new DatabaseRegistry(opened.db, opened.stats, opened.kind)
  const clock = options.clock ?? systemClock
  // Why: outside production an unset secret is generated once and kept, so restarts keep tokens valid.
  const jwtSecret = config.jwtSecret ?? (await ensureSetting(opened.db, 'jwt_secret', () => randomToken(32)))
  const secretsKey = deriveKey(
    config.secretsKey ?? (await ensureSetting(opened.db, 'secrets_key', () => randomToken(32))),
  )
  const hasher = createPasswordHasher({ cost: options.passwordCost ?? BCRYPT_COST })
  const tenants = new TenantCache(opened.db, config.platformTenantCode)
  const lockout = await createLockout(config, opened, options)
  const secretBudget = lockout.secretBudget(() => clock.now())
  const keystore = new Keystore(
    signingLookup(opened.db),
    Buffer.from(jwtSecret, 'utf8'),
    secretsKey,
    clock,
    config.publicUrl,
  )
  const keys = new KeyVerifier((hash) => findKeyByHash(opened.db, hash), config.platformTenantCode, clock)
  const publishableKeys = new PublishableKeyVerifier(opened.db)
  const listeners = new Set<(m: ChangeMessage) => void>()
  const apply = (m: ChangeMessage) => {
    for (const listener of listeners) listener(m)
    if (m.tenant) tenants.invalidate(m.tenant === '*' ? undefined : m.tenant)
    if (m.signing) keystore.invalidate(m.signing === '*' ? undefined : m.signing)
    // Why one flag for both kinds of key: a change of either is rare, and forgetting both caches costs
    // a lookup each; the channel's message format stays as it is.
    if (m.clientKeys) {
      keys.invalidate()
      publishableKeys.invalidate()
    }
    // A tenant turned INACTIVE stops its publishable keys too.
    if (m.tenant) publishableKeys.invalidate()
  }
  const channel =
    opened.kind === 'postgres' && config.databaseUrl
      ? new PgChangeChannel(config.databaseUrl, opened.db, { log: options.log })
      : localChannel
  await channel.start(apply, () => apply({ tenant: '*', clientKeys: true, signing: '*', oauthClients: '*' }))
  return {
    config,
    dbs,
    pingMain: opened.ping,
    clock,
    startedAt: Date.now(),
    version: pkg.version,
    tenants,
    keystore,
    tokens: new AccessTokenVerifier(keystore, tenants),
    keys,
    routing: new TenantRouting({ dbs, config, secretsKey, clock, log: options.log }),
    liveSession: (tenantId, sessionId, userId, nowMs) =>
      liveSessionLogin(dbs.forTenant(tenantId), tenantId, sessionId, userId, new Date(nowMs)),
    refreshTokenTenant,
    hasher,
    secretsKey,
    lockout,
    secretBudget,
    counters: secretBudget,
    publishableKeys,
    usedSolutions: await createUsedSolutions(config, opened),
    changed: async (m) => {
      apply(m)
      await channel.publish(m)
    },
    onChange: (listener) => void listeners.add(listener),
    channel,
    redisStatus: () => 'disabled',
  }
}

/**
 * Releases what createContext opened: the change channel's connection, the hasher's workers and the routed
 * pools (not the main database).
 */
export async function closeContext(ctx: AppContext): Promise<void> {
  await ctx.channel.close()
  ctx.lockout.close()
  ctx.usedSolutions.close()
  await ctx.hasher.close()
  await ctx.dbs.closeAll()
}
