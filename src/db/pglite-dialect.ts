import type { PGlite } from '@electric-sql/pglite'
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely'

/** A FIFO async lock: PGlite is one connection, so a transaction must hold it until it ends. */
class Mutex {
  private tail: Promise<void> = Promise.resolve()
  private waiters = 0

  async lock(): Promise<() => void> {
    let release!: () => void
    const next = new Promise<void>((r) => (release = r))
    const prev = this.tail
    this.tail = prev.then(() => next)
    this.waiters++
    await prev
    this.waiters--
    return release
  }

  get waiting(): number {
    return this.waiters
  }
}

class PGliteConnection implements DatabaseConnection {
  constructor(private readonly pg: PGlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const res = await this.pg.query<R>(query.sql, query.parameters as unknown[], { rowMode: 'object' })
    return res.affectedRows === undefined ? { rows: res.rows } : { rows: res.rows, numAffectedRows: BigInt(res.affectedRows) }
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streamQuery is not supported on PGlite')
  }
}

class PGliteDriver implements Driver {
  private readonly mutex = new Mutex()
  private readonly releases = new WeakMap<DatabaseConnection, () => void>()
  private readonly connection: PGliteConnection

  constructor(private readonly pg: PGlite) {
    this.connection = new PGliteConnection(pg)
  }

  async init(): Promise<void> {
    await this.pg.waitReady
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const release = await this.mutex.lock()
    // Why a fresh wrapper per acquisition: the release function is tied to this holder only.
    const conn = Object.create(this.connection) as PGliteConnection
    this.releases.set(conn, release)
    return conn
  }

  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const iso = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : ''
    await conn.executeQuery(CompiledQuery.raw(`begin${iso}`))
  }

  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('commit'))
  }

  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('rollback'))
  }

  async releaseConnection(conn: DatabaseConnection): Promise<void> {
    this.releases.get(conn)?.()
    this.releases.delete(conn)
  }

  async destroy(): Promise<void> {
    if (!this.pg.closed) await this.pg.close()
  }

  get waiting(): number {
    return this.mutex.waiting
  }
}

/** A Kysely dialect over an in-process PGlite (embedded PostgreSQL), one connection behind a lock. */
export class PGliteDialect implements Dialect {
  driver: PGliteDriver | undefined
  constructor(private readonly pg: PGlite) {}
  createAdapter() {
    return new PostgresAdapter()
  }
  createDriver(): Driver {
    this.driver = new PGliteDriver(this.pg)
    return this.driver
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler()
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db)
  }
}
