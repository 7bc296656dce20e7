import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, sql } from 'kysely'
import pg from 'pg'
import type tap from 'tap'
import { openDatabase, openPostgres, type DatabaseKind } from '../../src/db/connect.js'
import type { Database } from '../../src/db/database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { migrations } from '../../src/db/migrations/index.js'
import { PGliteDialect } from '../../src/db/pglite-dialect.js'

// Tests run on PGlite always, and also on real PostgreSQL when TEST_DATABASE_URL is set:
//
//   forEachBackend(t, async (t, { db }) => { ... })       // one subtest per back-end, database closed after
//   const tdb = await openTestDatabase('postgres')        // or one database by hand; await tdb.close()
//
// On PostgreSQL every database is a fresh `tessera_t_<random>` cloned from a migrated template
// `tessera_template_<hash of the migrations>` (kept between runs, rebuilt when a migration changes),
// and dropped by close().

export type Backend = 'pglite' | 'postgres'

/** The back-end tests use by default: TEST_BACKEND, else PGlite. */
export function defaultBackend(): Backend {
  refuseInSinglePassFile()
  return process.env.TEST_BACKEND === 'postgres' ? 'postgres' : 'pglite'
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

let runningTestFile: string | undefined

/** Names the test file a group process (test/helpers/group.ts) is running now, relative to the root. */
export function setRunningTestFile(file: string): void {
  runningTestFile = file
}

/**
 * Throws when the running test file is listed in test/single-pass.txt: `make tap` leaves those out of its
 * PostgreSQL pass, so a listed file that asks which back-end TEST_BACKEND names would never be tested on
 * PostgreSQL. A file run alone is argv[1]; a group names the file it runs (setRunningTestFile).
 */
function refuseInSinglePassFile(): void {
  const file = runningTestFile ?? (process.argv[1] ? relative(ROOT, process.argv[1]) : '')
  const listed = readFileSync(new URL('../single-pass.txt', import.meta.url), 'utf8')
    .split('\n')
    .some((line) => line.trim() === file)
  if (file && listed) {
    throw new Error(
      `${file} is listed in test/single-pass.txt (run on PGlite only) but depends on TEST_BACKEND: ` +
        'remove it from the list, or give the back-end explicitly',
    )
  }
}

/** Every back-end to test: PGlite, plus PostgreSQL when TEST_DATABASE_URL is set. */
export function backends(): Backend[] {
  return process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite']
}

export interface TestDatabase {
  /** `memory://` or the postgres:// URL of the fresh database. */
  readonly url: string
  readonly kind: DatabaseKind
  readonly db: Kysely<Database>
  /** Closes the handle and, on PostgreSQL, drops the database. */
  close(): Promise<void>
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
  const client = new pg.Client({ connectionString: serverUrl(), connectionTimeoutMillis: 5000 })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

const ident = (name: string) => pg.escapeIdentifier(name)
const randomName = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const pgCode = (err: unknown) => (err as { code?: unknown }).code

/** Hash of the migration names and sources, so an edited migration gets a new template. */
async function migrationsHash(): Promise<string> {
  const dir = new URL('../../src/db/migrations/', import.meta.url)
  const hash = createHash('sha256').update(Object.keys(migrations).join(','))
  for (const file of (await readdir(dir)).sort()) hash.update(file).update(await readFile(new URL(file, dir)))
  return hash.digest('hex').slice(0, 16)
}

let pgTemplate: Promise<string> | undefined

/**
 * The migrated template database, made once per migration set. Built under a temporary name, then renamed:
 * the rename is atomic, so concurrent test processes never clone a half-migrated template; the losers of
 * the race (42P04 duplicate_database) drop their copy and use the winner's.
 */
function templateName(): Promise<string> {
  pgTemplate ??= (async () => {
    const name = `tessera_template_${await migrationsHash()}`
    const exists = await admin((c) => c.query('select 1 from pg_database where datname = $1', [name]))
    if (exists.rowCount === 0) {
      const build = randomName('tessera_build')
      await admin((c) => c.query(`create database ${ident(build)}`))
      try {
        const opened = openPostgres(urlWithDatabase(build), { poolMax: 1 })
        try {
          await migrateToLatest(opened.db)
        } finally {
          await opened.close()
        }
        await admin((c) => c.query(`alter database ${ident(build)} rename to ${ident(name)}`))
      } catch (err) {
        await admin((c) => c.query(`drop database if exists ${ident(build)} with (force)`))
        if (pgCode(err) !== '42P04') throw err
      }
      await dropStaleTemplates(name)
    }
    return name
  })()
  pgTemplate.catch(() => (pgTemplate = undefined))
  return pgTemplate
}

async function dropStaleTemplates(current: string): Promise<void> {
  await admin(async (c) => {
    const stale = await c.query<{ datname: string }>(
      `select datname from pg_database where datname like 'tessera\\_template\\_%' and datname <> $1`,
      [current],
    )
    for (const { datname } of stale.rows) {
      // Best effort: another checkout may still be cloning it; it will be dropped next time.
      await c.query(`drop database if exists ${ident(datname)}`).catch(() => undefined)
    }
  })
}

/** A new empty (unmigrated) or template-cloned database on TEST_DATABASE_URL's server. */
async function createPgDatabase(migrated: boolean): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = randomName('tessera_t')
  for (let attempt = 0; ; attempt++) {
    const template = migrated ? await templateName() : undefined
    try {
      const from = template ? ` template ${ident(template)}` : ''
      await admin((c) => c.query(`create database ${ident(name)}${from}`))
      break
    } catch (err) {
      const code = pgCode(err)
      if (attempt >= 20 || (code !== '55006' && code !== '3D000')) throw err
      // 55006: someone is connected to the template at this instant; it passes. 3D000: a run of another
      // checkout (other migrations) found our template stale and dropped it; build it again.
      if (code === '3D000') pgTemplate = undefined
      await sleep(100 + Math.random() * 200)
    }
  }
  return {
    url: urlWithDatabase(name),
    drop: () =>
      admin(async (c) => void (await c.query(`drop database if exists ${ident(name)} with (force)`))),
  }
}

let pgliteDump: Promise<Blob> | undefined

/**
 * The dump, whose bytes are read once per process. Why: PGlite reads the whole dump (42 MB) at every open, and
 * a group process (test/helpers/group.ts) opens dozens; it only reads them (its untar copies each file into its
 * own file system). An open in a warm process cost 0.35 s of CPU against 0.43 s (2026-11-29, five each).
 */
class ReadOnceBlob extends Blob {
  #bytes: Promise<ArrayBuffer> | undefined
  override arrayBuffer(): Promise<ArrayBuffer> {
    return (this.#bytes ??= super.arrayBuffer())
  }
}

/** Where migrated PGlite data directories are kept between test processes (gitignored, like .tap/). */
const PGLITE_CACHE = new URL('../../.tap/pglite-template/', import.meta.url)

// The test databases' shared buffers, set in the template (postgresql.auto.conf travels in the dump). Why: PGlite
// starts with PostgreSQL's 128 MB, which every open zeroes inside its WebAssembly memory; a test database holds a
// few MB. At 16 MB an open from the dump cost 0.93 s of CPU against 1.36 s, and 0.68 s of wall against 1.10 s
// (2026-11-28, four opens each, alternated). The service's own PGlite keeps the default.
const TEMPLATE_SETTINGS = "alter system set shared_buffers = '16MB'"

/**
 * The cached dump's name: the migrations, their runner, the template's settings and the PGlite version (its
 * dump format) decide it.
 */
async function pgliteCacheName(): Promise<string> {
  const pkg = new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url)
  const { version } = JSON.parse(await readFile(pkg, 'utf8')) as { version: string }
  const runner = await readFile(new URL('../../src/db/migrate.ts', import.meta.url))
  const hash = createHash('sha256')
    .update(await migrationsHash())
    .update(runner)
    .update(TEMPLATE_SETTINGS)
    .digest('hex')
    .slice(0, 16)
  return `migrated-${hash}-pglite-${version}.tar`
}

/**
 * A migrated PGlite data directory, made once per migration set and PGlite version and kept on disk for
 * every test process after it; loaded once per process. Why on disk: creating and migrating PGlite costs a
 * process about 7 s of CPU, loading the dump about 1.5 s, and the suite runs some 80 processes per pass.
 */
export function pgliteTemplate(): Promise<Blob> {
  pgliteDump ??= (async () => {
    const name = await pgliteCacheName()
    const file = new URL(name, PGLITE_CACHE)
    const cached = await readFile(file).catch(() => undefined)
    if (cached) return new ReadOnceBlob([cached])
    const pglite = await PGlite.create()
    const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) })
    let dump: Blob
    try {
      await migrateToLatest(db)
      await sql.raw(TEMPLATE_SETTINGS).execute(db)
      dump = await pglite.dumpDataDir('none')
    } finally {
      await db.destroy()
    }
    // Written under a name of its own, then renamed: a concurrent process reads a whole file or none.
    await mkdir(PGLITE_CACHE, { recursive: true })
    for (const stale of await readdir(PGLITE_CACHE)) {
      if (stale.startsWith('migrated-') && stale !== name)
        await rm(new URL(stale, PGLITE_CACHE), { force: true })
    }
    const partial = new URL(`partial-${process.pid}-${randomBytes(4).toString('hex')}`, PGLITE_CACHE)
    const bytes = new Uint8Array(await dump.arrayBuffer())
    await writeFile(partial, bytes)
    await rename(partial, file)
    return new ReadOnceBlob([bytes])
  })()
  return pgliteDump
}

/**
 * A fresh database URL for one test app: `memory://` on PGlite, or a new database cloned from the migrated
 * template on TEST_DATABASE_URL's server. `drop` removes it.
 */
export async function createTestDatabaseUrl(
  backend: Backend = defaultBackend(),
): Promise<{ url: string; drop: () => Promise<void> }> {
  if (backend === 'pglite') return { url: 'memory://', drop: async () => undefined }
  return createPgDatabase(true)
}

/** Opens a fresh database, migrated unless `empty` (for migration tests). Close it with close(). */
export async function openTestDatabase(
  backend: Backend = defaultBackend(),
  opts: { empty?: boolean } = {},
): Promise<TestDatabase> {
  if (backend === 'pglite') {
    const loadDataDir = opts.empty ? undefined : await pgliteTemplate()
    const opened = await openDatabase('memory://', { dataDir: '', loadDataDir })
    return { url: 'memory://', kind: opened.kind, db: opened.db, close: opened.close }
  }
  const { url, drop } = await createPgDatabase(!opts.empty)
  const opened = openPostgres(url, { poolMax: 5 })
  let closing: Promise<void> | undefined
  const close = () =>
    (closing ??= (async () => {
      try {
        await opened.close()
      } finally {
        await drop()
      }
    })())
  return { url, kind: opened.kind, db: opened.db, close }
}

/** A tap subtest, as tap's own `t.test` callback receives it. */
export type TapTest = Parameters<Parameters<(typeof tap)['test']>[0]>[0]

/** Runs `fn` once per back-end as a subtest named after it, on a fresh migrated database closed afterwards. */
export async function forEachBackend(
  t: TapTest,
  fn: (t: TapTest, tdb: TestDatabase) => Promise<void>,
  opts: { empty?: boolean } = {},
): Promise<void> {
  for (const backend of backends()) {
    await t.test(backend, async (st) => {
      const tdb = await openTestDatabase(backend, opts)
      st.teardown(() => tdb.close())
      await fn(st, tdb)
    })
  }
}
