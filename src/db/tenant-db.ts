import {
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type QueryCompiler,
} from 'kysely'
import { SqlTransactionDriver } from './sql-transactions.js'
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

/** Thrown to a tenant's query that waited too long at a move's barrier; counts as unavailable (503). */
export class TenantMovingError extends Error {
  // Why ETIMEDOUT: isDatabaseUnavailable maps it to 503 SERVICE_UNAVAILABLE, like a database that is down.
  readonly code = 'ETIMEDOUT'
  constructor(ms: number) {
    super(`the tenant's database is being switched; waited ${ms} ms`)
    this.name = 'TenantMovingError'
  }
}

/** Thrown by `exclusive` when the tenant's running queries do not finish in time; nothing was run. */
export class TenantBusyError extends Error {
  readonly code = 'TENANT_BUSY'
  constructor(ms: number) {
    super(`the tenant's running queries did not finish within ${ms} ms`)
    this.name = 'TenantBusyError'
  }
}

export interface BarrierOptions {
  /** How long a query of a tenant waits while the tenant's database is switched; default 3,000 ms. */
  readonly waitMs?: number
  /** How long a switch waits for the tenant's running queries and transactions; default 5,000 ms. */
  readonly drainMs?: number
}

/** One tenant's barrier: queries hold it shared, a switch holds it alone. */
interface Gate {
  /** Connections of the tenant lent out now (a transaction counts once, from begin to commit). */
  active: number
  closed: boolean
  /** Settles when a closed gate opens again. */
  opened: Promise<void>
  open: () => void
  drained: (() => void) | undefined
}

/**
 * Which database holds a tenant's rows: the main one unless the tenant is routed to its own. Tenant-scoped
 * queries take their handle from `forTenant`, so routing changes this registry, never the queries.
 * Routed handles belong to the registry (it closes them); the main one belongs to its opener.
 *
 * `forTenant` handles pick the tenant's database each time they take a connection, and hold the tenant's
 * barrier while they keep it. `exclusive` closes the barrier for a switch: new queries wait, running
 * ones (whole transactions) finish first, so no write lands in the store the tenant is leaving once the
 * switch has begun, and none is made on a stale handle afterwards.
 */
export class DatabaseRegistry {
  readonly #routed = new Map<string, OpenedDatabase>()
  readonly #gates = new Map<string, Gate>()
  // Why kept: a handle is a few small objects, and making one per call would cost every query. One per
  // tenant that has had a query (callers pass ids of tenants they looked up), so bounded by the tenants.
  readonly #handles = new Map<string, Kysely<Database>>()
  readonly #waitMs: number
  readonly #drainMs: number

  constructor(
    readonly main: Kysely<Database>,
    private readonly mainStats: () => PoolStats,
    private readonly mainKind: DatabaseKind,
    barrier: BarrierOptions = {},
  ) {
    this.#waitMs = barrier.waitMs ?? 3000
    this.#drainMs = barrier.drainMs ?? 5000
  }

  /**
   * True when a tenant's rows live on a PostgreSQL server, whose WAL writer flushes an asynchronous
   * commit within a fraction of a second; false for embedded PGlite, which has no WAL writer.
   */
  onServer(tenantId: string): boolean {
    return (this.#routed.get(tenantId)?.kind ?? this.mainKind) === 'postgres'
  }

  /**
   * The handle for a tenant's rows. Each query or transaction runs on the tenant's database of the moment
   * it starts (its routed one, else the main one) and waits while that is being switched (up to the
   * barrier's wait, then TenantMovingError, a 503). Never await a query on it inside its own transaction.
   */
  forTenant(tenantId: string): Kysely<Database> {
    let db = this.#handles.get(tenantId)
    if (!db) {
      const driver = new TenantDriver(
        () => this.#enter(tenantId),
        () => this.storeFor(tenantId),
      )
      db = new Kysely<Database>({ dialect: new TenantDialect(driver) })
      this.#handles.set(tenantId, db)
    }
    return db
  }

  /**
   * The database that holds a tenant's rows now, without the barrier: for the switch itself, which moves
   * rows while the barrier is closed, and for tests.
   */
  storeFor(tenantId: string): Kysely<Database> {
    return this.#routed.get(tenantId)?.db ?? this.main
  }

  /**
   * Runs `fn` while no query of the tenant runs on this instance: closes the tenant's barrier (new queries
   * wait), waits for running ones to end (TenantBusyError after the drain time, with `fn` not run), runs
   * `fn`, and opens the barrier again, whatever `fn` did. One at a time per tenant.
   */
  async exclusive<T>(tenantId: string, fn: () => Promise<T>): Promise<T> {
    let gate = this.#gates.get(tenantId)
    if (!gate) {
      gate = newGate()
      this.#gates.set(tenantId, gate)
    }
    if (gate.closed) throw new Error('a switch of this tenant is already running')
    const g = gate
    g.closed = true
    g.opened = new Promise<void>((resolve) => (g.open = resolve))
    try {
      if (g.active > 0) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new TenantBusyError(this.#drainMs)), this.#drainMs)
          g.drained = () => {
            clearTimeout(timer)
            resolve()
          }
        })
      }
      return await fn()
    } finally {
      g.closed = false
      g.drained = undefined
      g.open()
      if (g.active === 0 && this.#gates.get(tenantId) === g) this.#gates.delete(tenantId)
    }
  }

  /** Takes a shared hold on the tenant's barrier; the returned function gives it back (once). */
  async #enter(tenantId: string): Promise<() => void> {
    const deadline = performance.now() + this.#waitMs
    for (;;) {
      let gate = this.#gates.get(tenantId)
      if (!gate) {
        gate = newGate()
        this.#gates.set(tenantId, gate)
      }
      if (!gate.closed) {
        gate.active++
        return this.#leaver(tenantId, gate)
      }
      await waitUntil(gate.opened, deadline, this.#waitMs)
    }
  }

  #leaver(tenantId: string, gate: Gate): () => void {
    let left = false
    return () => {
      if (left) return
      left = true
      gate.active--
      if (gate.active > 0) return
      if (gate.closed) gate.drained?.()
      else if (this.#gates.get(tenantId) === gate) this.#gates.delete(tenantId)
    }
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

  /** Every distinct routed database with the tenants routed to it (the retention pass sweeps each). */
  routedGroups(): { db: Kysely<Database>; tenantIds: string[] }[] {
    const groups = new Map<OpenedDatabase, string[]>()
    for (const [tenantId, d] of this.#routed) groups.set(d, [...(groups.get(d) ?? []), tenantId])
    return [...groups].map(([d, tenantIds]) => ({ db: d.db, tenantIds }))
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

function newGate(): Gate {
  return { active: 0, closed: false, opened: Promise.resolve(), open: () => undefined, drained: undefined }
}

async function waitUntil(opened: Promise<void>, deadline: number, waitMs: number): Promise<void> {
  const left = deadline - performance.now()
  if (left <= 0) throw new TenantMovingError(waitMs)
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      opened,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new TenantMovingError(waitMs)), left)
      }),
    ])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Lends connections of whichever database holds the tenant's rows when one is asked for, under the
 * tenant's barrier: the hold lasts until the connection is given back, so a transaction holds it from
 * begin to commit. Transaction statements are SqlTransactionDriver's plain SQL, the same on PostgreSQL and
 * PGlite.
 */
class TenantDriver extends SqlTransactionDriver {
  readonly #giveBack = new Map<DatabaseConnection, () => void>()

  constructor(
    private readonly enter: () => Promise<() => void>,
    private readonly store: () => Kysely<Database>,
  ) {
    super()
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const leave = await this.enter()
    try {
      return await this.#borrow(this.store(), leave)
    } catch (err) {
      leave()
      throw err
    }
  }

  /** Borrows one connection of `db`; `leave` runs once `db` has it back (or could not lend one). */
  #borrow(db: Kysely<Database>, leave: () => void): Promise<DatabaseConnection> {
    return new Promise((resolve, reject) => {
      db.getExecutor()
        .provideConnection(
          (connection) =>
            new Promise<void>((giveBack) => {
              this.#giveBack.set(connection, giveBack)
              resolve(connection)
            }),
        )
        .then(leave, (err: unknown) => {
          leave()
          reject(err)
        })
    })
  }

  async releaseConnection(conn: DatabaseConnection): Promise<void> {
    const giveBack = this.#giveBack.get(conn)
    this.#giveBack.delete(conn)
    giveBack?.()
  }

  // Why nothing: the databases belong to the registry and their openers, not to this handle.
  async destroy(): Promise<void> {}
}

class TenantDialect implements Dialect {
  constructor(private readonly driver: TenantDriver) {}

  createAdapter(): DialectAdapter {
    return new PostgresAdapter()
  }

  createDriver(): Driver {
    return this.driver
  }

  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler()
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(db)
  }
}
