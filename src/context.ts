import type { Kysely } from 'kysely'
import type { Config } from './config.js'
import type { Database } from './db/database.js'
import type { DatabaseRegistry } from './db/tenant-db.js'
import type { Clock } from './lib/clock.js'
import type { RouteSpec } from './lib/route-spec.js'
import type { PasswordHasher } from './lib/hashing.js'
import type { Keystore } from './security/keystore.js'
import type { AccessTokenVerifier } from './security/access-token.js'
import type { KeyVerifier } from './security/key-verifier.js'
import type { ChangeChannel, ChangeMessage } from './db/change-channel.js'
// Why type-only imports of module classes: the context names the services createContext builds, some of
// them a module's; their code stays behind the modules' layer (see ARCHITECTURE.md, Layers).
import type { TenantCache } from './modules/tenants/cache.js'
import type { TenantRouting } from './modules/tenants/routing/tenant-routing.js'
import type { Lockout } from './modules/account/lockout.js'
import type { SecretBudget } from './modules/account/secret-budget.js'

/**
 * What every module and plugin needs, built once by createContext (src/app/create-context.ts) and hung
 * on the instance as `app.ctx`; the CLI builds one too.
 */
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
  /** Per-tenant database routing: moves, deletions, and the routes followed from the main database. */
  readonly routing: TenantRouting
  /** The tenant id a refresh token carries (read from its text, nothing looked up), or null. */
  readonly refreshTokenTenant: (token: string) => string | null
  readonly hasher: PasswordHasher
  /** AES key for tenant secrets and routed-database credentials at rest (from SECRETS_KEY). */
  readonly secretsKey: Buffer
  /** Account throttling (auth_config.lockout): counters in Redis with REDIS_URL, else the main database. */
  readonly lockout: Lockout
  /** The per-user secret budget (contract section 22), always on, on the lockout's counter store. */
  readonly secretBudget: SecretBudget
  /**
   * Makes a change to cached state (a tenant, its signing keys, Client Keys) visible here at once and on
   * every other instance through the change channel (contract section 14). Call it after the commit.
   */
  readonly changed: (change: ChangeMessage) => Promise<void>
  /** The change channel (health reports `degraded` while its status is `down`). */
  readonly channel: ChangeChannel
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

/**
 * The database handle of the tenant a principal acts in (routed or main; see DatabaseRegistry). Services
 * acting for a principal take their handle here; paths with no principal yet (login, refresh, the second
 * step of a login) ask `ctx.dbs.forTenant(tenant.id)` directly.
 */
export function tdb(ctx: Pick<AppContext, 'dbs'>, actor: { readonly tenantId: string }): Kysely<Database> {
  return ctx.dbs.forTenant(actor.tenantId)
}
