/**
 * Auth benchmark (`make bench`): a listening server on a real PostgreSQL, driven by autocannon with 10
 * connections, beside the machine's own limits measured in the same run (raw bcrypt cost-12 compares on
 * all cores; a bare Fastify route doing one primary-key lookup with pg). Prints each ratio.
 *
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the server; a throw-away
 * database is created on it and dropped at the end. BENCH_SECONDS sets each run's length (default 10).
 */
import { execSync, spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import autocannon from 'autocannon'
import Fastify from 'fastify'
import pg from 'pg'
import { openPostgres } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { provisionTenant } from '../src/modules/tenants/provision.js'
import { createPasswordHasher, rawBcryptComparesPerSecond } from '../src/lib/hashing.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = 10
const PORT = 3917
const BASE = `http://127.0.0.1:${PORT}`
const PASSWORD = 'bench-password-9'
const server = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres')
const dbName = `tessera_bench_${randomUUID().slice(0, 8)}`
const dbUrl = new URL(server.toString())
dbUrl.pathname = `/${dbName}`

interface Row {
  name: string
  rps: number
  p50: number
  p99: number
  errors: number
}

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: server.toString() })
  await c.connect()
  await c.query(sql)
  await c.end()
}

function rssMb(child: ChildProcess): number {
  try {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8')
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
  } catch {
    return 0
  }
}

async function run(name: string, opts: autocannon.Options): Promise<Row> {
  const result = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts })
  const errors = result.non2xx + result.errors + result.timeouts
  return { name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors }
}

async function waitForHealth(): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      const res = await fetch(`${BASE}/health`)
      if (res.ok) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error('server did not start')
}

async function main(): Promise<void> {
  await admin(`create database ${dbName}`)
  const opened = openPostgres(dbUrl.toString(), { poolMax: 4 })
  let child: ChildProcess | undefined
  try {
    await migrateToLatest(opened.db)
    const hasher = createPasswordHasher({ cost: 12 })
    const hash = await hasher.hash(PASSWORD)
    await hasher.close()
    // Why raised budgets: the bench measures throughput, not the per-IP limits (tested elsewhere).
    const { tenant } = await provisionTenant(opened.db, {
      code: 'bench',
      name: 'Bench',
      authConfig: {
        rateLimits: { requestsPerMinute: 10_000_000, loginPerMinute: 10_000_000 },
        maxConcurrentSessions: 1000,
      },
    })
    const users = []
    for (let i = 0; i < CONNECTIONS; i++) {
      users.push(
        await opened.db
          .insertInto('users')
          .values({ tenant_id: tenant.id, email: `bench${i}@example.test`, password_hash: hash })
          .returning('id')
          .executeTakeFirstOrThrow(),
      )
    }

    // The machine's limits first, with the server not yet running.
    const bcryptRate = await rawBcryptComparesPerSecond(SECONDS * 1000)
    const bare = Fastify()
    const pool = new pg.Pool({ connectionString: dbUrl.toString(), max: 10 })
    bare.get('/bare/:id', async (req) => {
      const { rows } = await pool.query('select id, email from users where id = $1', [
        (req.params as { id: string }).id,
      ])
      return rows[0]
    })
    await bare.listen({ port: PORT + 1, host: '127.0.0.1' })
    const bareRow = await run('bare Fastify + pg PK lookup', {
      url: `http://127.0.0.1:${PORT + 1}/bare/${users[0].id}`,
    })
    await bare.close()
    await pool.end()

    // The service as `npm start` runs it: the bundled build on plain Node.
    execSync('npm run build --silent', { stdio: 'inherit' })
    child = spawn(
      process.execPath,
      [...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean), 'dist/server.js'],
      {
        env: {
          ...process.env,
          DATABASE_URL: dbUrl.toString(),
          PORT: String(PORT),
          LOG_LEVEL: 'warn',
          NODE_ENV: 'development',
        },
        stdio: ['ignore', 'inherit', 'inherit'],
      },
    )
    await waitForHealth()
    let peakRss = 0
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(child as ChildProcess))), 200)

    const login = async (i: number) => {
      const res = await fetch(`${BASE}/api/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          tenantCode: 'bench',
          identifier: `bench${i}@example.test`,
          password: PASSWORD,
        }),
      })
      return ((await res.json()) as { data: { accessToken: string; refreshToken: string } }).data
    }
    const sessions = await Promise.all(users.map((_, i) => login(i)))
    const token = sessions[0].accessToken
    const rows: Row[] = []

    let n = 0
    rows.push(
      await run('POST /login', {
        url: `${BASE}/api/v1/login`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        requests: [
          {
            setupRequest: (req) => ({
              ...req,
              body: JSON.stringify({
                tenantCode: 'bench',
                identifier: `bench${n++ % CONNECTIONS}@example.test`,
                password: PASSWORD,
              }),
            }),
          },
        ],
      }),
    )
    // A pool of live refresh tokens: each request takes one, its response puts the successor back.
    // (autocannon resets per-connection context between request sequences, so no per-connection chain.)
    const live = sessions.map((s) => s.refreshToken)
    rows.push(
      await run('POST /refresh', {
        url: `${BASE}/api/v1/refresh`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        requests: [
          {
            setupRequest: (req) => ({ ...req, body: JSON.stringify({ refreshToken: live.shift() }) }),
            onResponse: (status, body) => {
              if (status === 200) live.push(JSON.parse(body).data.refreshToken)
            },
          },
        ],
      }),
    )
    rows.push(
      await run('GET /me', { url: `${BASE}/api/v1/me`, headers: { authorization: `Bearer ${token}` } }),
    )
    rows.push(
      await run('POST /validate', {
        url: `${BASE}/api/v1/validate`,
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      }),
    )

    // GET /me while logins saturate the hash pool: reads must not queue behind bcrypt.
    const [, meUnderLogin] = await Promise.all([
      run('logins (background)', {
        url: `${BASE}/api/v1/login`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tenantCode: 'bench', identifier: 'bench1@example.test', password: PASSWORD }),
      }),
      run('GET /me during logins', {
        url: `${BASE}/api/v1/me`,
        headers: { authorization: `Bearer ${token}` },
        connections: 2,
      }),
    ])
    rows.push(meUnderLogin)
    clearInterval(sampler)

    const fmt = (r: Row) =>
      `${r.name.padEnd(30)} ${r.rps.toFixed(0).padStart(8)}/s  p50 ${String(r.p50).padStart(4)} ms  p99 ${String(r.p99).padStart(4)} ms  errors ${r.errors}`
    console.log(
      `\nTessera auth benchmark: ${CONNECTIONS} connections, ${SECONDS} s per run, real PostgreSQL\n`,
    )
    console.log('Machine limits (same run):')
    console.log(`  raw bcrypt cost-12 compares, all cores   ${bcryptRate.toFixed(2)}/s`)
    console.log(`  ${fmt(bareRow)}`)
    console.log('\nService:')
    for (const r of rows) console.log(`  ${fmt(r)}`)
    console.log(`  server peak RSS under load: ${peakRss.toFixed(0)} MB (target <= 150)`)
    const [loginRow, refreshRow, meRow, validateRow] = rows
    console.log('\nRatios and targets:')
    console.log(
      `  logins / raw bcrypt            ${((loginRow.rps / bcryptRate) * 100).toFixed(0)}%  (target >= 85%)`,
    )
    console.log(`  refreshes                      ${refreshRow.rps.toFixed(0)}/s (target >= 1500/s)`)
    console.log(
      `  GET /me / bare PK route        ${((meRow.rps / bareRow.rps) * 100).toFixed(0)}%  (${meRow.rps.toFixed(0)}/s, target >= 4000/s)`,
    )
    console.log(
      `  POST /validate / bare PK route ${((validateRow.rps / bareRow.rps) * 100).toFixed(0)}%  (${validateRow.rps.toFixed(0)}/s, target >= 12000/s)`,
    )
    console.log(`  GET /me p99 while logins saturate bcrypt: ${meUnderLogin.p99} ms (target < 50 ms)`)
  } finally {
    if (child) {
      child.kill('SIGTERM')
      await new Promise((r) => child?.once('exit', r))
    }
    await opened.close()
    await admin(`drop database if exists ${dbName} with (force)`)
  }
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
