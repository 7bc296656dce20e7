import type { Kysely } from 'kysely'
import type { DatabaseKind, OpenedDatabase, PoolStats } from './connect.js'
import type { Database } from './database.js'

/** Health's `routingPool` object. */
export interface RoutingPoolStats {
  /** Open pools: the main one plus each distinct routed one. */
  pools: number
  /** Tenants routed to a database of their own. */
  tenants: number
  totalConnections: number
  idleConnections: number
  waiting: number
}

/**
 * Which database holds a tenant's rows: the main one unless the tenant is routed to its own. Tenant-scoped
 * queries take their handle from `forTenant`, so routing changes this registry, never the queries.
 * Routed handles belong to the registry (it closes them); the main one belongs to its opener.
 */
export class DatabaseRegistry {
  readonly #routed = new Map<string, OpenedDatabase>()

  constructor(
    readonly main: Kysely<Database>,
    private readonly mainStats: () => PoolStats,
    private readonly mainKind: DatabaseKind,
  ) {}

  /**
   * True when a tenant's rows live on a PostgreSQL server, whose WAL writer flushes an asynchronous
   * commit within a fraction of a second; false for embedded PGlite, which has no WAL writer.
   */
  onServer(tenantId: string): boolean {
    return (this.#routed.get(tenantId)?.kind ?? this.mainKind) === 'postgres'
  }

  /** The handle for a tenant's rows: its routed database, else the main one. */
  forTenant(tenantId: string): Kysely<Database> {
    return this.#routed.get(tenantId)?.db ?? this.main
  }

  /** The routed database of a tenant, if any (for ping and relocation). */
  routedFor(tenantId: string): OpenedDatabase | undefined {
    return this.#routed.get(tenantId)
  }

  /** Sends a tenant's queries to `target` from now on; closes the former target when nobody else uses it. */
  async route(tenantId: string, target: OpenedDatabase): Promise<void> {
    const former = this.#routed.get(tenantId)
    this.#routed.set(tenantId, target)
    if (former && former !== target) await this.#closeIfUnused(former)
  }

  /** Sends a tenant's queries back to the main database; closes its former target when unused. */
  async unroute(tenantId: string): Promise<void> {
    const former = this.#routed.get(tenantId)
    this.#routed.delete(tenantId)
    if (former) await this.#closeIfUnused(former)
  }

  /** Pool numbers for health: the main pool plus every distinct routed one. */
  poolStats(): RoutingPoolStats {
    const all = [this.mainStats(), ...this.#distinct().map((d) => d.stats())]
    const sum = (pick: (s: PoolStats) => number) => all.reduce((n, s) => n + pick(s), 0)
    return {
      pools: all.length,
      tenants: this.#routed.size,
      totalConnections: sum((s) => s.total),
      idleConnections: sum((s) => s.idle),
      waiting: sum((s) => s.waiting),
    }
  }

  /** True when some routed database does not answer a ping (health reports `degraded`). */
  async anyRoutedDown(): Promise<boolean> {
    const down = await Promise.all(
      this.#distinct().map((d) =>
        d.ping().then(
          () => false,
          () => true,
        ),
      ),
    )
    return down.includes(true)
  }

  /** Closes every routed database (the main one is closed by its owner). */
  async closeAll(): Promise<void> {
    const all = this.#distinct()
    this.#routed.clear()
    await Promise.all(all.map((d) => d.close()))
  }

  #distinct(): OpenedDatabase[] {
    return [...new Set(this.#routed.values())]
  }

  async #closeIfUnused(handle: OpenedDatabase): Promise<void> {
    if (![...this.#routed.values()].includes(handle)) await handle.close()
  }
}
