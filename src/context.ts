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
import type { AuthConfig, LockoutConfig } from './security/auth-config.js'
import type { DirectoryTenant, SessionLookup, TenantDirectory } from './security/lookups.js'
import type { Principal } from './security/principal.js'
import { assertRecentSignIn } from './security/recent-auth.js'

// What the context holds that modules implement, declared here as interfaces (as src/security/lookups.ts
// declares the credential checks' lookups): createContext hands the modules' classes in, and nothing below
// the modules' layer imports them.

/** What the request path needs to know about a tenant. */
export interface TenantInfo extends DirectoryTenant {
  readonly name: string
  readonly status: 'ACTIVE' | 'INACTIVE'
  readonly authConfig: AuthConfig
}

/** Tenants by id and by code, cached briefly; implemented by modules/tenants/cache.ts. */
export interface Tenants extends TenantDirectory<TenantInfo> {
  /** Drops a tenant (all of them without an id) from the cache after a change. */
  invalidate(id?: string): void
}

/** Account throttling over a counter store; implemented by modules/account/lockout.ts. */
export interface AccountLockout {
  /** Seconds the identifier stays locked (0: not locked), and whether it has a record at all. */
  check(tenantId: string, key: string, now: number): Promise<{ lockedSeconds: number; tracked: boolean }>
  /** Counts a failed login; the length of the lock it started, or null. */
  failed(tenantId: string, key: string, cfg: LockoutConfig, now: number): Promise<number | null>
  /** A successful login starts the identifier's count over. */
  succeeded(tenantId: string, key: string): Promise<void>
  /** Lifts the locks of these keys (an administrator's unlock); SERVICE_UNAVAILABLE when the store is down. */
  clear(tenantId: string, keys: readonly string[]): Promise<void>
  /** `up`, or `down` since a call to the counter store failed and until one succeeds. */
  status(): 'up' | 'down'
  /** Closes the counter store's own connection, if it has one. */
  close(): void
}

/** One charge of a user's secret budget: taken (failures now counted in the window that started then), or refused. */
export type SecretCharge =
  | { readonly taken: true; readonly failures: number; readonly windowStartedAt: number }
  | { readonly taken: false; readonly retryAfterMs: number }

/** The per-user secret budget (contract section 22); implemented by modules/account/secret-budget.ts. */
export interface UserSecretBudget {
  /** Charges one check of the user's secret at `now`; refused once the window holds the limit's failures. */
  take(tenantId: string, userId: string, now: number): Promise<SecretCharge>
  /** Gives back a charge this budget handed out (the check passed, or never judged the secret). */
  giveBack(tenantId: string, userId: string, charge: SecretCharge): Promise<void>
  /** Forgets the user's failures (an administrator's unlock); SERVICE_UNAVAILABLE when the store is down. */
  clear(tenantId: string, userId: string): Promise<void>
  /** `up`, or `down` since a call to the shared store failed and until one succeeds. */
  status(): 'up' | 'down'
}

/**
 * A windowed counter shared like the account-throttling counters (Redis with REDIS_URL, else the main
 * database; this process's memory while they do not answer); implemented by modules/account/secret-budget.ts.
 */
export interface WindowCounter {
  /** Counts one event under (tenant, key) unless `limit` are counted in the window that started first. */
  charge(tenantId: string, key: string, limit: number, windowMs: number, now: number): Promise<SecretCharge>
}

/** A verified publishable key (contract section 20): what a sign-up needs of it. */
export interface SignupKey {
  readonly id: string
  readonly tenantId: string
  readonly tenantCode: string
  readonly defaultRoles: readonly string[]
  readonly signupsPerHour: number
}

/** Publishable keys as the sign-up operations and their CORS see them; implemented by modules/publishable-keys. */
export interface PublishableKeys {
  /**
   * The key a sign-up request names, or throws: UNAUTHORIZED (none, unknown, revoked, inactive tenant),
   * then ORIGIN_NOT_ALLOWED (no Origin, or one outside the key's list).
   */
  verify(value: unknown, origin: unknown): Promise<SignupKey>
  /**
   * May a browser on `origin` call the sign-up operations? With a key value: that key's own list. Without
   * one (a preflight carries no header values): whether some active key lists the origin.
   */
  originAllowed(origin: string, value: unknown): Promise<boolean>
  /** Forgets cached keys (after a change here or on another instance). */
  invalidate(): void
}

/** Used ALTCHA solutions (contract section 20): Redis with REDIS_URL, else the main database. */
export interface UsedSolutionStore {
  /** True for the first use of a solution (by its challenge's signature), false for every later one. */
  claim(signature: string, expiresAt: Date, now: number): Promise<boolean>
  /** Closes the store's own connection, if it has one. */
  close(): void
}

/** A tenant's database as the API shows it (host and database name only). */
export interface TenantDatabaseInfo {
  tenantId: string
  dedicated: boolean
  host: string | null
  database: string | null
}

/** Per-tenant database routing; implemented by modules/tenants/routing/tenant-routing.ts. */
export interface Routing {
  /** Restores every stored route, then follows other instances' changes. */
  start(): Promise<void>
  /** Stops following changes and waits for a running move or sync. */
  stop(): Promise<void>
  /** Moves the tenant's rows to the database at `url` (null: back to the main one). */
  setDatabase(tenantId: string, url: string | null): Promise<TenantDatabaseInfo>
  /** Deletes a tenant everywhere; false when it did not exist. */
  deleteTenant(tenantId: string): Promise<boolean>
}

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
  readonly tenants: Tenants
  readonly keystore: Keystore
  /** Verifies access tokens (remembers verified ones; see the class). */
  readonly tokens: AccessTokenVerifier
  readonly keys: KeyVerifier
  /** Per-tenant database routing: moves, deletions, and the routes followed from the main database. */
  readonly routing: Routing
  /** A live session's login time (the recent-sign-in check's second half; contract section 26). */
  readonly liveSession: SessionLookup
  /** The tenant id a refresh token carries (read from its text, nothing looked up), or null. */
  readonly refreshTokenTenant: (token: string) => string | null
  readonly hasher: PasswordHasher
  /** AES key for tenant secrets and routed-database credentials at rest (from SECRETS_KEY). */
  readonly secretsKey: Buffer
  /** Account throttling (auth_config.lockout): counters in Redis with REDIS_URL, else the main database. */
  readonly lockout: AccountLockout
  /** The per-user secret budget (contract section 22), always on, on the lockout's counter store. */
  readonly secretBudget: UserSecretBudget
  /** Windowed counters on the same store: the sign-up budgets (per IP, per publishable key). */
  readonly counters: WindowCounter
  /** Publishable keys: the sign-up operations' credential and their CORS (contract section 20). */
  readonly publishableKeys: PublishableKeys
  /** Where used sign-up proofs of work are recorded, so each is accepted once on every instance. */
  readonly usedSolutions: UsedSolutionStore
  /**
   * Makes a change to cached state (a tenant, its signing keys, Client Keys) visible here at once and on
   * every other instance through the change channel (contract section 14). Call it after the commit.
   */
  readonly changed: (change: ChangeMessage) => Promise<void>
  /** Hears every change, this instance's and the others' (a module's cache that the context does not hold). */
  readonly onChange: (listener: (change: ChangeMessage) => void) => void
  /** The change channel (health reports `degraded` while its status is `down`). */
  readonly channel: ChangeChannel
  /** `disabled` without REDIS_URL; replaced by the rate-limit plugin when Redis is configured. */
  redisStatus: () => 'up' | 'down' | 'disabled'
}

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext
  }
  interface FastifyRequest {
    /** The verified publishable key of a sign-up request (set by the gate on those two operations). */
    signupKey?: SignupKey
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

/**
 * The check of `x-recent-auth` (src/security/recent-auth.ts), for a service whose need for it depends on the
 * body (a scope added to a Client Key, a link host changed): 401 REAUTHENTICATION_REQUIRED for a user whose
 * sign-in is not recent; Client Keys and the operator pass.
 */
export function requireRecentSignIn(
  ctx: Pick<AppContext, 'clock' | 'liveSession'>,
  actor: Principal,
): Promise<void> {
  return assertRecentSignIn(actor, ctx.clock.now(), ctx.liveSession)
}
