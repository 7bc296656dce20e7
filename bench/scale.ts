/**
 * Scale benchmark (`make bench-scale`): the `make bench` hot paths and the list and filter endpoints, on an
 * EMPTY database and on a SEEDED one (10M audit rows, 10M Client Key usage rows, 1M users with 1M active
 * sessions, 100k Client Keys, 1,000 tenants: bench/scale-seed.ts), each workload run on one and then the
 * other in the same run, so both see the same machine. Then the retention measurement (bench/scale-retention.ts).
 *
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the server; the
 * databases are created on it. BENCH_SECONDS sets each run's length (default 10). SCALE_DATABASE_URL
 * reuses an already-seeded database (migrated to the latest first, never dropped); SCALE_KEEP=1 keeps the
 * one this run seeds and prints its URL. SCALE_ONLY=hot,lists,retention runs just those parts.
 * SCALE_FRACTION=0.01 seeds a hundredth (for trying the code). The servers run as bench/auth.ts runs them.
 */
import { execSync, spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import pg from 'pg'
import { openPostgres } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { createPasswordHasher } from '../src/lib/hashing.js'
import { BENCH_LOGINS, firstKeyOf, firstUserOf, keyId, seedScale, userId, seedEmpty } from './scale-seed.js'
import { measureRetention } from './scale-retention.js'
import { startFlags } from './proc.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const ONLY = process.env.SCALE_ONLY?.split(',').filter(Boolean)
const wanted = (part: string) => !ONLY || ONLY.includes(part)
const HOT_CONNECTIONS = 10
const WARMUP = Math.min(3, SECONDS)
// Why fewer: an admin console is not ten dashboards refreshing at once; with 2 connections on 2 cores
// the p99 measures the query, not the queue behind it.
const LIST_CONNECTIONS = Number(process.env.SCALE_LIST_CONNECTIONS ?? 2)
const PORT = 3927
const PASSWORD = 'bench-password-9'
const SECRETS_KEY = 'bench-secrets-key-0123456789abcdef0123'
const server = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres')
const tag = randomUUID().slice(0, 8)

/**
 * What must be undone however the run ends: servers stopped, then databases dropped (the last registered
 * first). Run on a normal end, on an error, on Ctrl-C or SIGTERM, and on an unhandled rejection, so a run
 * never leaves its databases (20 GB at full size) behind.
 */
const undos: (() => Promise<void>)[] = []
/** Registers `undo`; returns a function that runs it now, once, and forgets it. */
function onExit(undo: () => Promise<void>): () => Promise<void> {
  let ran = false
  const once = async () => {
    if (ran) return
    ran = true
    undos.splice(undos.indexOf(once), 1)
    await undo()
  }
  undos.push(once)
  return once
}
let undoing: Promise<void> | undefined
/** Runs every registered undo, newest first; one that fails is reported and the rest still run. */
function undoAll(): Promise<void> {
  undoing ??= (async () => {
    for (const undo of [...undos].reverse()) {
      await undo().catch((err: unknown) => console.error('cleanup:', err))
    }
  })()
  return undoing
}
let firstError: unknown
/** Prints the first error only (later ones are usually its consequences), cleans up, exits 1. */
function fail(err: unknown): void {
  if (firstError === undefined) {
    firstError = err ?? new Error('undefined error')
    console.error('bench-scale failed:', err)
  }
  void undoAll().finally(() => process.exit(1))
}
process.on('unhandledRejection', fail)
process.on('uncaughtException', fail)
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping the servers and dropping this run's databases`)
    void undoAll().finally(() => process.exit(130))
  })
}

/** A database on the bench server by name. */
function urlOf(name: string): string {
  const u = new URL(server.toString())
  u.pathname = `/${name}`
  return u.toString()
}

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: server.toString() })
  await c.connect()
  try {
    await c.query(sql)
  } finally {
    await c.end()
  }
}

interface Row {
  rps: number
  p50: number
  p99: number
  errors: number
}

async function run(opts: autocannon.Options): Promise<Row> {
  const r = await autocannon({ duration: SECONDS, ...opts })
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.non2xx + r.errors + r.timeouts,
  }
}

/** A server as `npm start` runs it (bundle, node flags, default log level, log to a file), like bench/auth.ts. */
async function startServer(
  dbUrl: string,
  port: number,
): Promise<{ base: string; stop: () => Promise<void> }> {
  const log = join(tmpdir(), `tessera_scale_${tag}_${port}.server.log`)
  const child: ChildProcess = spawn(
    process.execPath,
    [...startFlags(), ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean), 'dist/server.js'],
    {
      env: {
        ...process.env,
        DATABASE_URL: dbUrl,
        PORT: String(port),
        ...(process.env.BENCH_LOG_LEVEL ? { LOG_LEVEL: process.env.BENCH_LOG_LEVEL } : {}),
        NODE_ENV: 'development',
        SECRETS_KEY,
      },
      stdio: ['ignore', openSync(log, 'w'), 'inherit'],
    },
  )
  const base = `http://127.0.0.1:${port}`
  const stop = onExit(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r))
      child.kill('SIGTERM')
      await exited
    }
    rmSync(log, { force: true })
  })
  for (let i = 0; i < 150; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok) return { base, stop }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  const tail = readFileSync(log, 'utf8').slice(-2000)
  await stop()
  throw new Error(`server did not start; its log ends:\n${tail}`)
}

/** Logs in and returns the tokens (throws on anything but 200). */
async function login(base: string, tenantCode: string, email: string) {
  const res = await fetch(`${base}/api/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tenantCode, identifier: email, password: PASSWORD }),
  })
  if (res.status !== 200) throw new Error(`login ${tenantCode}/${email}: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { data: { accessToken: string; refreshToken: string } }).data
}

interface Workload {
  name: string
  kind: 'hot' | 'list'
  /** The autocannon options for one server (its base URL and the tokens got there). */
  opts: (s: Target) => autocannon.Options
  /** Runs before each run on a server. */
  before?: (s: Target) => Promise<void>
}

interface Target {
  base: string
  /** The bench tenant's login users' tokens. */
  sessions: { accessToken: string; refreshToken: string }[]
  /** The live refresh tokens of those sessions (each refresh replaces its token by the successor). */
  live: string[]
  adminToken: Record<'bench' | 'typical', string>
}

function workloads(): Workload[] {
  const json = { 'content-type': 'application/json' }
  const hot: Workload[] = [
    {
      name: 'POST /login',
      kind: 'hot',
      opts: (s) => {
        let n = 0
        return {
          url: `${s.base}/api/v1/login`,
          method: 'POST',
          headers: json,
          requests: [
            {
              setupRequest: (req) => ({
                ...req,
                body: JSON.stringify({
                  tenantCode: 'bench',
                  identifier: `bench${n++ % BENCH_LOGINS}@example.test`,
                  password: PASSWORD,
                }),
              }),
            },
          ],
        }
      },
    },
    {
      name: 'POST /refresh',
      kind: 'hot',
      // Why fresh sessions per run: the requests in flight when a run ends are rotated by the server, but
      // autocannon drops their responses, so their successors are lost to the pool.
      before: async (s) => {
        const fresh = await Promise.all(
          Array.from({ length: BENCH_LOGINS }, (_, i) => login(s.base, 'bench', `bench${i}@example.test`)),
        )
        s.live = fresh.map((x) => x.refreshToken)
      },
      opts: (s) => {
        // A pool of live refresh tokens (kept across runs): each request takes one, its response puts the
        // successor back.
        const live = s.live
        return {
          url: `${s.base}/api/v1/refresh`,
          method: 'POST',
          headers: json,
          requests: [
            {
              setupRequest: (req) => ({ ...req, body: JSON.stringify({ refreshToken: live.shift() }) }),
              onResponse: (status, body) => {
                if (status === 200)
                  live.push((JSON.parse(body) as { data: { refreshToken: string } }).data.refreshToken)
              },
            },
          ],
        }
      },
    },
    {
      name: 'GET /me',
      kind: 'hot',
      opts: (s) => ({
        url: `${s.base}/api/v1/me`,
        headers: { authorization: `Bearer ${s.sessions[0]?.accessToken}` },
      }),
    },
    {
      name: 'POST /validate',
      kind: 'hot',
      opts: (s) => ({
        url: `${s.base}/api/v1/validate`,
        method: 'POST',
        headers: { authorization: `Bearer ${s.sessions[0]?.accessToken}` },
      }),
    },
  ]
  const lists: Workload[] = []
  const tenants = [
    // tenant bench: 1M audit rows, 100k users; its busiest key has 100k usage rows.
    { code: 'bench' as const, user: userId(12345), q: 'user12345', key: keyId(0) },
    // tenant typical: ~9,000 audit rows, ~900 users, ~91 usage rows per key.
    {
      code: 'typical' as const,
      user: userId(firstUserOf(1) + 999 * 5),
      q: `user${firstUserOf(1) + 999 * 5}`,
      key: keyId(firstKeyOf(1)),
    },
  ]
  for (const t of tenants) {
    const get = (name: string, path: string) =>
      lists.push({
        name: `${name} [${t.code}]`,
        kind: 'list',
        opts: (s) => ({
          url: `${s.base}/api/v1${path}`,
          headers: { authorization: `Bearer ${s.adminToken[t.code]}` },
        }),
      })
    get('GET /auth-logs', '/auth-logs')
    get(
      'GET /auth-logs?action=LOGIN&success=false&since=7d',
      '/auth-logs?action=LOGIN&success=false&since=7d',
    )
    get('GET /auth-logs?userId=…&since=30d', `/auth-logs?userId=${t.user}&since=30d`)
    // The console's Overview charts (issue 29): their defaults are the last 24 h by hour and 30 days by day.
    get('GET /auth-logs/stats?bucket=hour', '/auth-logs/stats?bucket=hour')
    get('GET /auth-logs/stats?bucket=day', '/auth-logs/stats?bucket=day')
    get('GET /tenants/me/metrics/security', '/tenants/me/metrics/security')
    get(`GET /users?q=${t.q}`, `/users?q=${t.q}`)
    get('GET /client-keys/{id}/stats', `/client-keys/${t.key}/stats`)
  }
  return [...(wanted('hot') ? hot : []), ...(wanted('lists') ? lists : [])]
}

async function target(base: string): Promise<Target> {
  const sessions = []
  for (let i = 0; i < BENCH_LOGINS; i++) sessions.push(await login(base, 'bench', `bench${i}@example.test`))
  return {
    base,
    sessions,
    live: sessions.map((x) => x.refreshToken),
    adminToken: {
      bench: (await login(base, 'bench', 'admin@example.test')).accessToken,
      typical: (await login(base, 'typical', 'admin@example.test')).accessToken,
    },
  }
}

const ms = (r: Row) => `${r.p50} / ${r.p99}`

function report(results: { w: Workload; empty: Row; seeded: Row }[]): void {
  console.log(
    `\n## Scale benchmark: empty vs seeded (${SECONDS} s per run; hot paths ${HOT_CONNECTIONS} connections, lists ${LIST_CONNECTIONS})\n`,
  )
  console.log(
    '| workload | empty rps | empty p50 / p99 ms | seeded rps | seeded p50 / p99 ms | rps seeded/empty | p99 seeded/empty | errors e/s | target |',
  )
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |')
  for (const { w, empty, seeded } of results) {
    const ratio = seeded.rps / empty.rps
    const p99Ratio = empty.p99 > 0 ? seeded.p99 / empty.p99 : NaN
    const target =
      w.kind === 'hot'
        ? `rps within 15%: ${ratio >= 0.85 ? 'ok' : 'MISS'}`
        : `p99 < 100 ms: ${seeded.p99 < 100 ? 'ok' : 'MISS'}`
    console.log(
      `| ${w.name} | ${empty.rps.toFixed(0)} | ${ms(empty)} | ${seeded.rps.toFixed(0)} | ${ms(seeded)} | ${(ratio * 100).toFixed(0)}% | ${Number.isNaN(p99Ratio) ? 'n/a' : p99Ratio.toFixed(2)} | ${empty.errors}/${seeded.errors} | ${target} |`,
    )
  }
}

async function main(): Promise<void> {
  const hasher = createPasswordHasher({ cost: 12 })
  const hash = await hasher.hash(PASSWORD)
  await hasher.close()
  const emptyName = `tessera_scale_empty_${tag}`
  const seededName = `tessera_scale_${tag}`
  const seededUrl = process.env.SCALE_DATABASE_URL ?? urlOf(seededName)
  const drop = (name: string) => onExit(() => admin(`drop database if exists ${name} with (force)`))
  try {
    console.log(`# make bench-scale (${new Date().toISOString()})\n`)
    const dropEmpty = drop(emptyName)
    await admin(`create database ${emptyName}`)
    await seedEmpty(urlOf(emptyName), hash)
    if (process.env.SCALE_DATABASE_URL) {
      const opened = openPostgres(seededUrl, { poolMax: 2 })
      const started = performance.now()
      const applied = await migrateToLatest(opened.db).finally(() => opened.close())
      console.log(
        `Reusing the seeded database ${seededUrl}; migrations applied now: ${applied.join(', ') || 'none'} (${((performance.now() - started) / 1000).toFixed(1)} s)`,
      )
    } else {
      console.log(`Seeding ${seededName}:`)
      // Why not on SCALE_KEEP=1: kept means kept, though a run that fails halfway keeps a partial seed.
      if (process.env.SCALE_KEEP !== '1') drop(seededName)
      await admin(`create database ${seededName}`)
      const opened = openPostgres(seededUrl, { poolMax: 4 })
      try {
        await migrateToLatest(opened.db)
        await seedScale(opened.db, seededUrl, hash, console.log)
      } finally {
        await opened.close()
      }
    }
    const list = workloads()
    // Every part starts servers from the bundle, the retention part too.
    if (list.length > 0 || wanted('retention')) execSync('npm run build --silent', { stdio: 'inherit' })
    if (list.length > 0) {
      const e = await startServer(urlOf(emptyName), PORT)
      const s = await startServer(seededUrl, PORT + 1)
      const targets = { empty: await target(e.base), seeded: await target(s.base) }
      const results: { w: Workload; empty: Row; seeded: Row }[] = []
      for (const w of list) {
        const conns = { connections: w.kind === 'hot' ? HOT_CONNECTIONS : LIST_CONNECTIONS }
        // Why a warm-up on each: the first seconds of a workload on a fresh process are JIT and cold caches.
        for (const t of [targets.empty, targets.seeded]) {
          await w.before?.(t)
          await run({ ...conns, ...w.opts(t), duration: WARMUP })
        }
        // Why alternate the order: drift in the machine's load then favours neither database.
        const first: Target = results.length % 2 === 0 ? targets.empty : targets.seeded
        const second = first === targets.empty ? targets.seeded : targets.empty
        await w.before?.(first)
        const a = await run({ ...conns, ...w.opts(first) })
        await w.before?.(second)
        const b = await run({ ...conns, ...w.opts(second) })
        const [empty, seeded] = first === targets.empty ? [a, b] : [b, a]
        console.error(
          `  ${w.name}: empty ${empty.rps.toFixed(0)}/s p99 ${empty.p99} ms, seeded ${seeded.rps.toFixed(0)}/s p99 ${seeded.p99} ms`,
        )
        results.push({ w, empty, seeded })
      }
      report(results)
      await s.stop()
      await e.stop()
    }
    await dropEmpty()
    if (wanted('retention'))
      await measureRetention(seededUrl, tag, { admin, onExit, urlOf, startServer, login })
    if (!process.env.SCALE_DATABASE_URL && process.env.SCALE_KEEP === '1')
      console.log(`\nKept the seeded database: SCALE_DATABASE_URL=${seededUrl}`)
  } finally {
    await undoAll()
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => fail(err),
)
