import type { PGlite, Results } from '@electric-sql/pglite'
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely'
import { preparePgParam } from './pg-params.js'
import { SqlTransactionDriver } from './sql-transactions.js'

/** Thrown when the single PGlite connection stays taken past the acquire timeout. */
export class PGliteBusyError extends Error {
  readonly code = 'PGLITE_BUSY'
  constructor(timeoutMs: number) {
    super(
      `PGlite connection still busy after ${timeoutMs} ms (a query awaited outside the transaction that holds ` +
        'the only connection deadlocks on PGlite)',
    )
    this.name = 'PGliteBusyError'
  }
}

export interface PGliteDialectConfig {
  /** The database; the dialect owns it and closes it on `db.destroy()`. */
  readonly pglite: PGlite
  /** How long a query waits for the connection before PGliteBusyError. Default 15,000 ms. */
  readonly acquireTimeoutMs?: number
}

/** Pool-like numbers of the single connection, for health and metrics. */
export interface PGliteStats {
  total: number
  idle: number
  waiting: number
}

/** FIFO lock over the one connection: a transaction keeps it from begin to commit. */
class ConnectionLock {
  #held = false
  readonly #queue: (() => void)[] = []

  acquire(timeoutMs: number): Promise<void> {
    if (!this.#held) {
      this.#held = true
      return Promise.resolve()
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        const i = this.#queue.indexOf(grant)
        if (i >= 0) this.#queue.splice(i, 1)
        reject(new PGliteBusyError(timeoutMs))
      }, timeoutMs)
      this.#queue.push(grant)
    })
  }

  release(): void {
    // Why hand over instead of unlocking: a newcomer must not overtake the queue.
    const next = this.#queue.shift()
    if (next) next()
    else this.#held = false
  }

  get held(): boolean {
    return this.#held
  }

  get waiting(): number {
    return this.#queue.length
  }
}

const DML = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE'])

function toQueryResult<R>(res: Results<R> | undefined): QueryResult<R> {
  if (!res) return { rows: [] }
  // Same rule as Kysely's pg driver: affected rows only for data-changing commands.
  const changes =
    res.affectedRows !== undefined && (res.command === undefined || DML.has(res.command.toUpperCase()))
  return changes ? { rows: res.rows, numAffectedRows: BigInt(res.affectedRows ?? 0) } : { rows: res.rows }
}

class PGliteConnection implements DatabaseConnection {
  #released = false

  constructor(private readonly pglite: PGlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#released) throw new Error('PGlite connection used after release')
    if (query.parameters.length === 0) {
      // Why exec: pg sends a parameterless query with the simple protocol, which allows several
      // statements in one string; PGlite's query() would refuse that, so migrations would diverge.
      const results = await this.pglite.exec(query.sql, { rowMode: 'object' })
      return toQueryResult(results.at(-1) as Results<R> | undefined)
    }
    const params = query.parameters.map(preparePgParam)
    return toQueryResult(await this.pglite.query<R>(query.sql, params, { rowMode: 'object' }))
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streamQuery is not supported by the PGlite dialect; page with limit/offset instead')
  }

  markReleased(): void {
    this.#released = true
  }
}

class PGliteDriver extends SqlTransactionDriver {
  readonly #pglite: PGlite
  readonly #timeoutMs: number
  readonly #lock = new ConnectionLock()
  #destroyed = false

  constructor(config: PGliteDialectConfig) {
    super()
    this.#pglite = config.pglite
    this.#timeoutMs = config.acquireTimeoutMs ?? 15_000
  }

  async init(): Promise<void> {
    await this.#pglite.waitReady
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.#destroyed) throw new Error('PGlite is closed')
    await this.#lock.acquire(this.#timeoutMs)
    return new PGliteConnection(this.#pglite)
  }

  async releaseConnection(conn: DatabaseConnection): Promise<void> {
    if (conn instanceof PGliteConnection) conn.markReleased()
    this.#lock.release()
  }

  async destroy(): Promise<void> {
    if (this.#destroyed) return
    this.#destroyed = true
    // Why wait: closing under a running transaction would lose it; a stuck holder only delays close.
    await this.#lock.acquire(this.#timeoutMs).catch(() => undefined)
    if (!this.#pglite.closed) await this.#pglite.close()
  }

  stats(): PGliteStats {
    return { total: this.#destroyed ? 0 : 1, idle: this.#lock.held ? 0 : 1, waiting: this.#lock.waiting }
  }
}

/**
 * A Kysely dialect over PGlite (PostgreSQL in WebAssembly, in this process). PGlite is one connection, so
 * the driver lends it to one holder at a time: a transaction holds it from begin to commit, and every
 * other query waits. Never await a query on the outer `db` inside a transaction: it would wait forever
 * (PGliteBusyError after the acquire timeout). Parameters are serialized the way `pg` does.
 */
export class PGliteDialect implements Dialect {
  readonly #driver: PGliteDriver

  constructor(config: PGliteDialectConfig) {
    this.#driver = new PGliteDriver(config)
  }

  createAdapter(): DialectAdapter {
    return new PostgresAdapter()
  }

  createDriver(): Driver {
    return this.#driver
  }

  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler()
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(db)
  }

  /** The single connection's use: total 1, idle 0 or 1, and how many queries wait for it. */
  stats(): PGliteStats {
    return this.#driver.stats()
  }
}
