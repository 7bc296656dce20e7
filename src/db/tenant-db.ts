import type { Kysely } from 'kysely'
import type { Database } from './database.js'
import type { OpenedDatabase, PoolStats } from './connect.js'

/**
 * The database handle per tenant: the main database unless the tenant is routed to its own. Every
 * tenant-scoped query takes its handle from `forTenant`, so routing changes this class, not the queries.
 */
export class DatabaseRegistry {
  private readonly routed = new Map<string, OpenedDatabase>()

  constructor(
    readonly main: Kysely<Database>,
    private readonly mainStats: () => PoolStats,
  ) {}

  /** The handle for a tenant's rows. */
  forTenant(tenantId: string): Kysely<Database> {
    return this.routed.get(tenantId)?.db ?? this.main
  }

  /** The routed database of a tenant, if any. */
  routedFor(tenantId: string): OpenedDatabase | undefined {
    return this.routed.get(tenantId)
  }

  /** Sends a tenant's queries to its own database from now on (closing a former one). */
  async route(tenantId: string, target: OpenedDatabase): Promise<void> {
    const former = this.routed.get(tenantId)
    this.routed.set(tenantId, target)
    if (former && former !== target) await former.close()
  }

  /** Sends a tenant's queries back to the main database. */
  async unroute(tenantId: string): Promise<void> {
    const former = this.routed.get(tenantId)
    this.routed.delete(tenantId)
    await former?.close()
  }

  /** Pool numbers for health: the main pool plus every routed one. */
  poolStats(): { pools: number; tenants: number; totalConnections: number; idleConnections: number; waiting: number } {
    const all = [this.mainStats(), ...[...this.routed.values()].map((d) => d.stats())]
    return {
      pools: all.length,
      tenants: this.routed.size,
      totalConnections: all.reduce((n, s) => n + s.total, 0),
      idleConnections: all.reduce((n, s) => n + s.idle, 0),
      waiting: all.reduce((n, s) => n + s.waiting, 0),
    }
  }

  /** True when some routed database does not answer (health reports `degraded`). */
  async anyRoutedDown(): Promise<boolean> {
    const results = await Promise.all([...this.routed.values()].map((d) => d.ping().then(() => false, () => true)))
    return results.includes(true)
  }

  /** Closes every routed pool (the main one is closed by its owner). */
  async closeAll(): Promise<void> {
    const all = [...this.routed.values()]
    this.routed.clear()
    await Promise.all(all.map((d) => d.close()))
  }
}
