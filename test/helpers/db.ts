import { createHash, randomUUID } from 'node:crypto'
import pg from 'pg'
import { openPostgres } from '../../src/db/connect.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { migrations } from '../../src/db/migrations/index.js'

export type Backend = 'pglite' | 'postgres'

/** The back-end tests use: TEST_BACKEND, else PGlite. `make test` runs the suite once per back-end. */
export function defaultBackend(): Backend {
  return process.env.TEST_BACKEND === 'postgres' ? 'postgres' : 'pglite'
}

function serverUrl(): string {
  const url = process.env.TEST_DATABASE_URL
  if (!url) throw new Error('TEST_DATABASE_URL is not set; the postgres back-end needs it')
  return url
}

/** The same server as TEST_DATABASE_URL, another database on it. */
export function urlWithDatabase(name: string): string {
  const u = new URL(serverUrl())
  u.pathname = `/${name}`
  return u.toString()
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl() })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

let template: Promise<string> | undefined

/** A migrated template database, made once per migration set (locked, so parallel test files agree). */
function templateName(): Promise<string> {
  template ??= (async () => {
    const hash = createHash('sha256').update(Object.keys(migrations).join(',')).digest('hex').slice(0, 12)
    const name = `tessera_tpl_${hash}`
    await admin(async (c) => {
      await c.query('select pg_advisory_lock(7421)')
      try {
        const exists = await c.query('select 1 from pg_database where datname = $1', [name])
        if (exists.rowCount === 0) {
          await c.query(`create database ${name}`)
          const opened = openPostgres(urlWithDatabase(name), { poolMax: 1 })
          try {
            await migrateToLatest(opened.db)
          } finally {
            await opened.close()
          }
        }
      } finally {
        await c.query('select pg_advisory_unlock(7421)')
      }
    })
    return name
  })()
  return template
}

/**
 * A fresh database URL for one test app: `memory://` on PGlite, or a new database cloned from the
 * migrated template on TEST_DATABASE_URL's server. `drop` removes it.
 */
export async function createTestDatabaseUrl(backend: Backend = defaultBackend()): Promise<{ url: string; drop: () => Promise<void> }> {
  if (backend === 'pglite') return { url: 'memory://', drop: async () => undefined }
  const tpl = await templateName()
  const name = `tessera_t_${randomUUID().replace(/-/g, '').slice(0, 16)}`
  await admin(async (c) => {
    // Why the lock: CREATE DATABASE ... TEMPLATE fails while another session is connected to the template.
    await c.query('select pg_advisory_lock(7421)')
    try {
      await c.query(`create database ${name} template ${tpl}`)
    } finally {
      await c.query('select pg_advisory_unlock(7421)')
    }
  })
  return {
    url: urlWithDatabase(name),
    drop: () => admin(async (c) => void (await c.query(`drop database if exists ${name} with (force)`))),
  }
}
