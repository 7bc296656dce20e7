import type { Config } from './config.js'
import type { DatabaseRegistry } from './db/tenant-db.js'
import type { Clock } from './lib/clock.js'
import type { RouteSpec } from './lib/route-spec.js'
import type { PasswordHasher } from './lib/hashing.js'
import type { Keystore } from './auth/keystore.js'
import type { AccessTokenVerifier } from './auth/access-token.js'
import type { KeyVerifier } from './auth/key-verifier.js'
import type { TenantCache } from './modules/tenants/cache.js'

/** What every module needs, built once by buildApp and hung on the instance as `app.ctx`. */
export interface AppContext {
  readonly config: Config
  readonly dbs: DatabaseRegistry
  /** Round-trip time of the main database in ms; throws when it does not answer. */
  readonly pingMain: () => Promise<number>
  readonly clock: Clock
  readonly startedAt: number
  readonly version: string
  readonly tenants: TenantCache
  readonly keystore: Keystore
  /** Verifies access tokens (remembers verified ones; see the class). */
  readonly tokens: AccessTokenVerifier
  readonly keys: KeyVerifier
  readonly hasher: PasswordHasher
  /** AES key for tenant secrets and routed-database credentials at rest (from SECRETS_KEY). */
  readonly secretsKey: Buffer
  /** `disabled` without REDIS_URL; replaced by the rate-limit plugin when Redis is configured. */
  redisStatus: () => 'up' | 'down' | 'disabled'
}

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext
  }
  interface FastifyContextConfig {
    operationId?: string
    spec?: RouteSpec
  }
}
