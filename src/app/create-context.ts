import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'
import type { AppContext } from '../context.js'
import type { OpenedDatabase } from '../db/connect.js'
import { DatabaseRegistry } from '../db/tenant-db.js'
import { systemClock, type Clock } from '../lib/clock.js'
import { deriveKey } from '../lib/crypto-box.js'
import { createPasswordHasher } from '../lib/hashing.js'
import { randomToken } from '../lib/tokens.js'
import { AccessTokenVerifier } from '../auth/access-token.js'
import { KeyVerifier } from '../auth/key-verifier.js'
import { Keystore } from '../auth/keystore.js'
import { refreshTokenTenant } from '../modules/auth/sessions.js'
import { findKeyByHash } from '../modules/client-keys/auth-queries.js'
import { ensureSetting } from '../modules/system/settings.js'
import { TenantCache } from '../modules/tenants/cache.js'
import { TenantRouting } from '../modules/tenants/routing/tenant-routing.js'
import pkg from '../../package.json' with { type: 'json' }

export interface ContextOptions {
  readonly clock?: Clock
  /** Where routing and the routed pools log. */
  readonly log: FastifyBaseLogger
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
  const hasher = createPasswordHasher({ cost: 12 })
  const tenants = new TenantCache(opened.db, config.platformTenantCode)
  const keystore = new Keystore(opened.db, Buffer.from(jwtSecret, 'utf8'), secretsKey, clock)
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
    keys: new KeyVerifier((hash) => findKeyByHash(opened.db, hash), config.platformTenantCode, clock),
    routing: new TenantRouting({ dbs, config, secretsKey, clock, log: options.log }),
    refreshTokenTenant,
    hasher,
    secretsKey,
    redisStatus: () => 'disabled',
  }
}

/** Releases what createContext opened: the hasher's workers and the routed pools (not the main database). */
export async function closeContext(ctx: AppContext): Promise<void> {
  await ctx.hasher.close()
  await ctx.dbs.closeAll()
}
