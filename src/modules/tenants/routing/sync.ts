import { createHash } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Config } from '../../../config.js'
import type { OpenedDatabase } from '../../../db/connect.js'
import type { Database } from '../../../db/database.js'
import { migrateToLatest } from '../../../db/migrate.js'
import type { DatabaseRegistry } from '../../../db/tenant-db.js'
import type { Clock } from '../../../lib/clock.js'
import { decryptSecret, encryptSecret } from '../../../lib/crypto-box.js'
import { openRoutedDatabase } from './connect.js'
import { deleteRoute, findRouteUrl, listRoutes, upsertRoute } from './queries.js'
import { storedRoutingTarget, type RoutingTarget } from './url.js'

/** What tenant routing needs of the service: built by createContext before the context itself. */
export interface RoutingDeps {
  readonly dbs: DatabaseRegistry
  readonly config: Pick<Config, 'routingAllowedHosts' | 'databasePoolMax'>
  /** AES key of the stored URLs (SECRETS_KEY). */
  readonly secretsKey: Buffer
  readonly clock: Clock
  readonly log: FastifyBaseLogger
}

// Why small: every routed database gets its own pool next to the main one; many tenants multiply it.
const ROUTED_POOL_MAX = 5
// Why under 5 s: a request for a tenant whose database is down must get its 503 within 5 s (docs/decisions.md D1).
// Also the time every failed reachability check of a new target takes (see TenantMover's reach).
export const ROUTED_CONNECT_TIMEOUT_MS = 4000

/** The box context binding an encrypted URL to its tenant (a box copied to another row fails to open). */
const urlContext = (tenantId: string) => `tenant:${tenantId}:database-url`
const stampOf = (urlEnc: string) => createHash('sha256').update(urlEnc).digest('hex')

interface Known {
  /** Hash of the stored encrypted URL: a new box on every change, so another instance's change shows. */
  readonly stamp: string
  /** Hash of the URL itself: tenants routed to the same URL share one pool. */
  readonly urlHash: string
}

/**
 * The routes this instance follows: the stored ones (tenant_databases in the main database), read at
 * start and on every sync, and the pools they use (tenants routed to one URL share a pool). Stores and
 * reads the encrypted URLs. Not serialised itself: TenantRouting runs its calls one at a time.
 */
export class RouteSync {
  readonly #known = new Map<string, Known>()
  #stopped = false

  constructor(private readonly deps: RoutingDeps) {}

  get #main(): Kysely<Database> {
    return this.deps.dbs.main
  }

  /** True when DATABASE_ROUTING_ALLOWED_HOSTS is unset: loopback and link-local addresses are refused. */
  get checkAddresses(): boolean {
    return this.deps.config.routingAllowedHosts.length === 0
  }

  /** From now on a sync changes nothing (the running one stops at its next step). */
  stop(): void {
    this.#stopped = true
  }

  /** A pool for the target: the one of a routed tenant with the same URL, else a new one. */
  open(target: RoutingTarget): OpenedDatabase {
    const urlHash = stampOf(target.url)
    for (const [tenantId, k] of this.#known) {
      const shared = k.urlHash === urlHash ? this.deps.dbs.routedFor(tenantId) : undefined
      if (shared) return shared
    }
    return openRoutedDatabase(target.connection, {
      poolMax: Math.min(ROUTED_POOL_MAX, this.deps.config.databasePoolMax),
      connectionTimeoutMillis: ROUTED_CONNECT_TIMEOUT_MS,
      logger: this.deps.log,
      checkAddresses: this.checkAddresses,
    })
  }

  /** Closes a handle unless a routed tenant uses it. */
  async release(handle: OpenedDatabase): Promise<void> {
    for (const tenantId of this.#known.keys()) if (this.deps.dbs.routedFor(tenantId) === handle) return
    await handle.close()
  }

  /** Forgets the tenant's route as seen (its stored row is gone, or never committed). */
  forget(tenantId: string): void {
    this.#known.delete(tenantId)
  }

  /**
   * Brings this instance's routes in line with the stored ones: routes new or changed ones (migrating
   * their databases first when `migrate`), sends removed ones back to the main database.
   */
  async sync(migrate: boolean): Promise<void> {
    if (this.#stopped) return
    const { dbs, log } = this.deps
    const rows = await listRoutes(this.#main)
    const seen = new Set<string>()
    for (const row of rows) {
      seen.add(row.tenant_id)
      const stamp = stampOf(row.url_enc)
      if (this.#known.get(row.tenant_id)?.stamp === stamp) continue
      // Why throw: a URL that no longer decrypts means SECRETS_KEY changed; serving the tenant from the
      // main database instead would answer "no such user" for every one of them.
      const url = decryptSecret(row.url_enc, this.deps.secretsKey, urlContext(row.tenant_id))
      const opened = this.open(storedRoutingTarget(url))
      if (migrate) {
        // Why not fatal: one unreachable tenant database must not keep the service from starting; its
        // requests answer 503 until it is back.
        await migrateToLatest(opened.db).catch((err: unknown) =>
          log.warn({ err, tenantId: row.tenant_id }, 'migrating a routed tenant database failed'),
        )
      }
      if (this.#stopped) return void (await this.release(opened))
      // Why under the barrier: the former pool closes once unused; queries running on it finish first.
      await dbs
        .exclusive(row.tenant_id, () => dbs.route(row.tenant_id, opened))
        .catch(async (err: unknown) => {
          await this.release(opened)
          throw err
        })
      this.#known.set(row.tenant_id, { stamp, urlHash: stampOf(url) })
    }
    for (const tenantId of [...this.#known.keys()]) {
      if (seen.has(tenantId)) continue
      await dbs.exclusive(tenantId, () => dbs.unroute(tenantId))
      this.#known.delete(tenantId)
    }
  }

  /** The tenant's stored target (decrypted), or null when it has none. */
  async storedTarget(tenantId: string): Promise<RoutingTarget | null> {
    const row = await findRouteUrl(this.#main, tenantId)
    if (!row) return null
    return storedRoutingTarget(decryptSecret(row.url_enc, this.deps.secretsKey, urlContext(tenantId)))
  }

  /** Stores (or removes) the tenant's route through `db` (main, or a transaction on it) and remembers it as seen. */
  async persist(db: Kysely<Database>, tenantId: string, target: RoutingTarget | null): Promise<void> {
    if (target === null) {
      await deleteRoute(db, tenantId)
      this.#known.delete(tenantId)
      return
    }
    const urlEnc = encryptSecret(target.url, this.deps.secretsKey, urlContext(tenantId))
    const now = new Date(this.deps.clock.now())
    await upsertRoute(db, { tenantId, urlEnc, host: target.host, database: target.database, now })
    this.#known.set(tenantId, { stamp: stampOf(urlEnc), urlHash: stampOf(target.url) })
  }
}
