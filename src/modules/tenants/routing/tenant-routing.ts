import type { Routing, TenantDatabaseInfo } from '../../../context.js'
import { isDatabaseUnavailable } from '../../../db/connect.js'
import { TenantMover } from './move.js'
import { routeInfo } from './queries.js'
import { RouteSync, type RoutingDeps } from './sync.js'
import { vetRoutingUrl } from './url.js'

// How often an instance looks for routing changes made by another one.
const SYNC_INTERVAL_MS = 3000

/**
 * Per-tenant database routing of one app instance (`ctx.routing`): moves a tenant's rows (move.ts),
 * restores routes at start and follows changes made by other instances (sync.ts). Moves, deletions and
 * syncs run one at a time.
 */
export class TenantRouting implements Routing {
  readonly #routes: RouteSync
  readonly #mover: TenantMover
  #queue: Promise<unknown> = Promise.resolve()
  #timer: NodeJS.Timeout | undefined

  constructor(private readonly deps: RoutingDeps) {
    this.#routes = new RouteSync(deps)
    this.#mover = new TenantMover(deps, this.#routes)
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn)
    this.#queue = run.catch(() => undefined)
    return run
  }

  /** Restores every stored route (migrating those databases), then polls for other instances' changes. */
  async start(): Promise<void> {
    await this.#exclusive(() => this.#routes.sync(true))
    this.#timer = setInterval(() => {
      this.#exclusive(() => this.#routes.sync(false)).catch((err: unknown) => {
        // Why quiet for an unreachable main database: health reports that; this would repeat it every 3 s.
        if (isDatabaseUnavailable(err)) this.deps.log.debug({ err }, 'tenant routing sync failed')
        else this.deps.log.warn({ err }, 'tenant routing sync failed')
      })
    }, SYNC_INTERVAL_MS)
    this.#timer.unref()
  }

  /** Stops polling and waits for a running move or sync; the registry closes the pools. */
  async stop(): Promise<void> {
    this.#routes.stop()
    clearInterval(this.#timer)
    await this.#queue
  }

  /** The tenant's routing as the API shows it (host and database name only). */
  info(tenantId: string): Promise<TenantDatabaseInfo> {
    return routeInfo(this.deps.dbs.main, tenantId)
  }

  /**
   * Moves the tenant's rows to the database at `url` (or back to the main one for null): connect,
   * migrate, copy, switch, then remove them from the former store. Any failure leaves routing as it
   * was (DATABASE_ROUTING_FAILED); an unreachable main database is SERVICE_UNAVAILABLE.
   */
  setDatabase(tenantId: string, url: string | null): Promise<TenantDatabaseInfo> {
    const target = url === null ? null : vetRoutingUrl(url, this.deps.config.routingAllowedHosts)
    return this.#exclusive(async () => {
      await this.#mover.move(tenantId, target)
      return this.info(tenantId)
    })
  }

  /**
   * Deletes a tenant everywhere (audit rows stay, in the main database). Returns false when the tenant
   * did not exist.
   */
  deleteTenant(tenantId: string): Promise<boolean> {
    return this.#exclusive(() => this.#mover.deleteTenant(tenantId))
  }
}
