import { CompiledQuery, type DatabaseConnection, type Driver, type TransactionSettings } from 'kysely'

/**
 * A Kysely driver's transaction and savepoint methods as plain PostgreSQL SQL sent on the connection in
 * hand: the same statements on a PostgreSQL server and on PGlite. Why a base class: the PGlite dialect
 * and the tenant handle (DatabaseRegistry) both lend connections their own way but end and nest
 * transactions alike, and they had copied these methods.
 */
export abstract class SqlTransactionDriver implements Driver {
  abstract init(): Promise<void>
  abstract acquireConnection(): Promise<DatabaseConnection>
  abstract releaseConnection(conn: DatabaseConnection): Promise<void>
  abstract destroy(): Promise<void>

  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    let text = 'begin'
    if (settings.isolationLevel || settings.accessMode) {
      text = 'start transaction'
      if (settings.isolationLevel) text += ` isolation level ${settings.isolationLevel}`
      if (settings.accessMode) text += ` ${settings.accessMode}`
    }
    await conn.executeQuery(CompiledQuery.raw(text))
  }

  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('commit'))
  }

  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('rollback'))
  }

  async savepoint(conn: DatabaseConnection, name: string): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw(`savepoint ${quoteIdent(name)}`))
  }

  async rollbackToSavepoint(conn: DatabaseConnection, name: string): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw(`rollback to savepoint ${quoteIdent(name)}`))
  }

  async releaseSavepoint(conn: DatabaseConnection, name: string): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw(`release savepoint ${quoteIdent(name)}`))
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}
