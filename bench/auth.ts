/**
 * Auth benchmark (`make bench`): a listening server on a real PostgreSQL, driven by autocannon with 10
 * connections, beside the machine's own limits measured in the same run (raw bcrypt cost-12 compares on
 * all cores; a bare Fastify route doing one primary-key lookup with pg). Prints each ratio.
 *
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the server; a throw-away
 * database is created on it and dropped at the end. BENCH_SECONDS sets each run's length (default 10).
 * The server runs as `npm start` runs it (bundle, node flags, default log level, its log to a file);
 * BENCH_LOG_LEVEL overrides its level, BENCH_NODE_FLAGS adds node flags, and BENCH_ONLY=refresh,me
 * runs just those workloads (names: limits, login, loginOtp, passkey, refresh, me, validate and its replay
 * (bench/replay-ceiling.ts), validateEdDSA, validateES256, signing, meUnderLogin, forgot, signup, and the
 * OpenID provider's codeExchange, refreshGrant, userinfo, introspection, each beside the bare library's
 * ceiling, and Better Auth's OAuth provider with BENCH_PEER=1: bench/oidc.ts).
 */
import { execSync, spawn, type ChildProcess } from 'node:child_process'
import { openSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import autocannon from 'autocannon'
import Fastify from 'fastify'
import pg from 'pg'
import { openPostgres } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { provisionTenant } from '../src/modules/tenants/provision.js'
import { createPasswordHasher, rawBcryptComparesPerSecond } from '../src/lib/hashing.js'
import { seedOtpUsers, twoStepRequests } from './otp-login.js'
import { PASSKEY_ORIGIN, PASSKEY_RP_ID, passkeyRequests, registerPasskeys } from './passkey-login.js'
import { rssOf, startFlags, ticksOf, withChildren } from './proc.js'
import { seedAsymmetricTenant, signingCosts } from './asymmetric.js'
import { benchIp, prepareSignups, SIGNUP_ORIGIN } from './signup.js'
import { captureResponse, replayServer } from './replay-ceiling.js'
import { oidcBench, OIDC_WORKLOADS } from './oidc.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
// BENCH_ONLY=refresh,me runs just those service workloads (and no machine limits): for iterating.
const ONLY = process.env.BENCH_ONLY?.split(',').filter(Boolean)
const wanted = (name: string) => !ONLY || ONLY.includes(name)
const CONNECTIONS = 10
const PORT = 3917
const BASE = `http://127.0.0.1:${PORT}`
const PASSWORD = 'bench-password-9'
const SECRETS_KEY = 'bench-secrets-key-0123456789abcdef0123'
type Workload =
  | 'login'
  | 'loginOtp'
  | 'passkey'
  | 'refresh'
  | 'me'
  | 'validate'
  | 'validateReplayed'
  | 'validateEdDSA'
  | 'validateES256'
  | 'meUnderLogin'
  | 'forgotKnown'
  | 'forgotUnknown'
  | 'signup'
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
  /** CPU the server process used during the run, in % of one core. */
  serverCpu: number
  /** CPU of every PostgreSQL process during the run, in % of one core. */
  pgCpu: number
}

/** Where the server's log lines go. */
const SERVER_LOG = join(tmpdir(), `${dbName}.server.log`)

/** The server process under test, once spawned (its CPU is reported per run). */
let serverPid: number | undefined
const TICK_MS = 10 // USER_HZ is 100 on Linux

/** CPU ticks of the server and of all postgres processes. */
function cpuTicks(): { server: number; pg: number } {
  let pg = 0
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').startsWith('postgres')) pg += ticksOf(Number(entry))
    } catch {
      // the process ended meanwhile
    }
  }
  // With WORKERS=n the server is a primary and its workers: their ticks add up.
  const server = serverPid ? withChildren(serverPid).reduce((n, pid) => n + ticksOf(pid), 0) : 0
  return { server, pg }
}

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: server.toString() })
  await c.connect()
  await c.query(sql)
  await c.end()
}

async function run(name: string, opts: autocannon.Options): Promise<Row> {
  const before = cpuTicks()
  const started = performance.now()
  const result = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts })
  const after = cpuTicks()
  const pct = (ticks: number) => Math.max(0, ((ticks * TICK_MS) / (performance.now() - started)) * 100)
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
    serverCpu: serverPid ? pct(after.server - before.server) : NaN,
    pgCpu: pct(after.pg - before.pg),
  }
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
  throw new Error(`server did not start; its log ends:\n${readFileSync(SERVER_LOG, 'utf8').slice(-2000)}`)
}

/** The reference point: a bare Fastify route doing one primary-key lookup with pg. */
async function bareRoute(userId: string): Promise<Row> {
  const bare = Fastify()
  const pool = new pg.Pool({ connectionString: dbUrl.toString(), max: 10 })
  bare.get('/bare/:id', async (req) => {
    const { rows } = await pool.query('select id, email from users where id = $1', [
      (req.params as { id: string }).id,
    ])
    return rows[0]
  })
  await bare.listen({ port: PORT + 1, host: '127.0.0.1' })
  try {
    return await run('bare Fastify + pg PK lookup', { url: `http://127.0.0.1:${PORT + 1}/bare/${userId}` })
  } finally {
    await bare.close()
    await pool.end()
  }
}

async function login(i: number): Promise<{ accessToken: string; refreshToken: string }> {
  const res = await fetch(`${BASE}/api/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tenantCode: 'bench', identifier: `bench${i}@example.test`, password: PASSWORD }),
  })
  return ((await res.json()) as { data: { accessToken: string; refreshToken: string } }).data
}

const fmt = (r: Row) =>
  `${r.name.padEnd(30)} ${r.rps.toFixed(0).padStart(8)}/s  p50 ${String(r.p50).padStart(4)} ms  p99 ${String(r.p99).padStart(4)} ms  errors ${r.errors}  cpu: ${Number.isNaN(r.serverCpu) ? '' : `server ${r.serverCpu.toFixed(0)}% `}pg ${r.pgCpu.toFixed(0)}%`

/** Prints the figures, the machine's limits and each ratio against its target. */
function report(
  bcryptRate: number,
  bare: Row | undefined,
  rows: Partial<Record<Workload, Row>>,
  peakRss: number,
): void {
  const pct = (a: number, b: number | undefined) => (b ? `${((a / b) * 100).toFixed(0)}%` : 'n/a')
  console.log(`\nTessera auth benchmark: ${CONNECTIONS} connections, ${SECONDS} s per run, real PostgreSQL\n`)
  if (bare) {
    console.log('Machine limits (same run):')
    console.log(`  raw bcrypt cost-12 compares, all cores   ${bcryptRate.toFixed(2)}/s`)
    console.log(`  ${fmt(bare)}`)
  }
  console.log('\nService:')
  for (const r of Object.values(rows)) console.log(`  ${fmt(r)}`)
  console.log(`  server peak RSS under load: ${peakRss.toFixed(0)} MB (target <= 150)`)
  console.log(`  server log level: ${process.env.BENCH_LOG_LEVEL ?? 'info'} (one access line per request)`)
  console.log('\nRatios and targets:')
  const { login: l, loginOtp: lo, passkey: pk, refresh: r, me, validate: v, meUnderLogin: mu } = rows
  if (l) console.log(`  logins / raw bcrypt            ${pct(l.rps, bcryptRate)}  (target >= 85%)`)
  if (pk && l && l.rps > 0)
    console.log(
      `  passkey logins / password      ${(pk.rps / 2 / l.rps).toFixed(1)}x  (ES256 verify, no bcrypt)`,
    )
  const { forgotKnown: fk, forgotUnknown: fu } = rows
  if (fk && fu)
    console.log(
      `  forgot existing / unknown user ${pct(fk.rps, fu.rps)}  (p99 ${fk.p99} vs ${fu.p99} ms; target: within noise)`,
    )
  // Two requests per two-step login: autocannon counts each.
  if (l && lo)
    console.log(
      `  two-step logins / one-step     ${pct(lo.rps / 2, l.rps)}  (${(lo.rps / 2).toFixed(1)}/s: one bcrypt each)`,
    )
  if (r)
    console.log(
      `  POST /refresh / bare PK route  ${pct(r.rps, bare?.rps)}  (${r.rps.toFixed(0)}/s, target >= 1500/s)`,
    )
  if (me)
    console.log(
      `  GET /me / bare PK route        ${pct(me.rps, bare?.rps)}  (${me.rps.toFixed(0)}/s, target >= 4000/s)`,
    )
  if (v)
    console.log(
      `  POST /validate / bare PK route ${pct(v.rps, bare?.rps)}  (${v.rps.toFixed(0)}/s, target >= 12000/s)`,
    )
  const replayed = rows.validateReplayed
  if (v && replayed)
    console.log(
      `  POST /validate / its replay    ${pct(v.rps, replayed.rps)}  (the load generator's ceiling for the same bytes: ${replayed.rps.toFixed(0)}/s)`,
    )
  if (mu) console.log(`  GET /me p99 while logins saturate bcrypt: ${mu.p99} ms (target < 50 ms)`)
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
        webauthn: { rpId: PASSKEY_RP_ID, origins: [PASSKEY_ORIGIN] },
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
    const firstUser = users[0]
    if (!firstUser) throw new Error('no bench user was created')
    const otpUsers = wanted('loginOtp') ? await seedOtpUsers(opened.db, tenant.id, hash, SECRETS_KEY) : []
    const asymmetric = {
      EdDSA: await seedAsymmetricTenant(opened.db, 'EdDSA', hash, SECRETS_KEY),
      ES256: await seedAsymmetricTenant(opened.db, 'ES256', hash, SECRETS_KEY),
    }

    // Enough for the run at a few hundred sign-ups a second (bcrypt-bound like register: far fewer).
    const signups = wanted('signup')
      ? await prepareSignups(opened.db, tenant.id, SECRETS_KEY, Math.max(50, SECONDS * 300))
      : undefined

    // The machine's limits first, with the server not yet running.
    const bcryptRate = wanted('limits') ? await rawBcryptComparesPerSecond(SECONDS * 1000) : NaN
    const bareRow = wanted('limits') ? await bareRoute(firstUser.id) : undefined

    // The service as `npm start` runs it: the bundled build on plain Node.
    execSync('npm run build --silent', { stdio: 'inherit' })
    child = spawn(
      process.execPath,
      [...startFlags(), ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean), 'dist/server.js'],
      {
        env: {
          ...process.env,
          DATABASE_URL: dbUrl.toString(),
          PORT: String(PORT),
          // The service's own default level (info: one access line per request) unless BENCH_LOG_LEVEL.
          ...(process.env.BENCH_LOG_LEVEL ? { LOG_LEVEL: process.env.BENCH_LOG_LEVEL } : {}),
          NODE_ENV: 'development',
          SECRETS_KEY,
          // Mail on (written to the server's log file), for POST /password/forgot.
          SMTP_URL: 'log://',
          // Why: POST /signup's requests each come from their own address (X-Forwarded-For), since one
          // address may sign up 10 times an hour; no other row sends the header.
          TRUST_PROXY: 'loopback',
        },
        // Why a file: a log sink as in production, without the bench process reading every line.
        stdio: ['ignore', openSync(SERVER_LOG, 'w'), 'inherit'],
      },
    )
    serverPid = child.pid
    await waitForHealth()
    let peakRss = 0
    let peakRssPerProcess = 0
    const sampler = setInterval(() => {
      const rss = withChildren(child?.pid ?? 0).map(rssOf)
      peakRss = Math.max(
        peakRss,
        rss.reduce((a, b) => a + b, 0),
      )
      peakRssPerProcess = Math.max(peakRssPerProcess, ...rss)
    }, 200)

    const sessions = await Promise.all(users.map((_, i) => login(i)))
    const firstSession = sessions[0]
    if (!firstSession) throw new Error('no bench session was opened')
    const token = firstSession.accessToken
    const rows: Partial<Record<Workload, Row>> = {}

    let n = 0
    if (wanted('login'))
      rows.login = await run('POST /login', {
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
      })
    if (wanted('loginOtp')) {
      const tally = { completed: 0, failed: 0 }
      const row = await run('POST /login + /login/otp', {
        url: BASE,
        headers: { 'content-type': 'application/json' },
        requests: twoStepRequests(otpUsers, 'bench', PASSWORD, tally),
      })
      // Why: autocannon counts the first step's expected 401 as an error; the tally knows better.
      rows.loginOtp = { ...row, errors: tally.failed }
    }
    if (wanted('passkey')) {
      const auths = await registerPasskeys(
        BASE,
        sessions.map((s) => s.accessToken),
      )
      const tally = { completed: 0, failed: 0 }
      const row = await run('POST /login/passkey/options + /login/passkey', {
        url: BASE,
        headers: { 'content-type': 'application/json' },
        requests: passkeyRequests(auths, 'bench', tally),
      })
      rows.passkey = { ...row, errors: tally.failed }
    }
    // A pool of live refresh tokens: each request takes one, its response puts the successor back.
    // (autocannon resets per-connection context between request sequences, so no per-connection chain.)
    const live = sessions.map((s) => s.refreshToken)
    if (wanted('refresh'))
      rows.refresh = await run('POST /refresh', {
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
      })
    if (wanted('me'))
      rows.me = await run('GET /me', {
        url: `${BASE}/api/v1/me`,
        headers: { authorization: `Bearer ${token}` },
      })
    if (wanted('validate')) {
      const authorization = `Bearer ${token}`
      rows.validate = await run('POST /validate', {
        url: `${BASE}/api/v1/validate`,
        method: 'POST',
        headers: { authorization },
      })
      const reply = await captureResponse(PORT, 'POST', '/api/v1/validate', { authorization })
      const replay = await replayServer(new Map([[authorization, reply]]))
      try {
        rows.validateReplayed = await run('POST /validate, replayed', {
          url: `http://127.0.0.1:${replay.port}/api/v1/validate`,
          method: 'POST',
          headers: { authorization },
        })
      } finally {
        await replay.stop()
      }
    }

    for (const alg of ['EdDSA', 'ES256'] as const) {
      if (!wanted(`validate${alg}`)) continue
      const who = asymmetric[alg]
      const res = await fetch(`${BASE}/api/v1/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tenantCode: who.code, identifier: who.email, password: PASSWORD }),
      })
      const asymToken = ((await res.json()) as { data: { accessToken: string } }).data.accessToken
      rows[`validate${alg}`] = await run(`POST /validate (${alg})`, {
        url: `${BASE}/api/v1/validate`,
        method: 'POST',
        headers: { authorization: `Bearer ${asymToken}` },
      })
    }
    // GET /me while logins saturate the hash pool: reads must not queue behind bcrypt.
    if (wanted('meUnderLogin'))
      [, rows.meUnderLogin] = await Promise.all([
        run('logins (background)', {
          url: `${BASE}/api/v1/login`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            tenantCode: 'bench',
            identifier: 'bench1@example.test',
            password: PASSWORD,
          }),
        }),
        run('GET /me during logins', {
          url: `${BASE}/api/v1/me`,
          headers: { authorization: `Bearer ${token}` },
          connections: 2,
        }),
      ])
    // POST /password/forgot for an existing user and for an unknown one, side by side: the answer must not
    // tell them apart, in time either (the lookup runs after the answer; past the hourly cap of 3, the known
    // user's requests queue no mail, as the unknown one's never do).
    if (wanted('forgot')) {
      // Two rounds, the second reported: the first warms the code paths up, and each pair runs back to back.
      for (let round = 0; round < 2; round++) {
        for (const [key, identifier] of [
          ['forgotKnown', 'bench0@example.test'],
          ['forgotUnknown', 'nobody@example.test'],
        ] as const) {
          const who = key === 'forgotKnown' ? 'existing' : 'unknown'
          // Why a pause: the lookups of the previous run finish after its answers; let them drain first.
          await new Promise((r) => setTimeout(r, 3000))
          rows[key] = await run(`POST /password/forgot (${who} user${round === 0 ? ', warm-up' : ''})`, {
            url: `${BASE}/api/v1/password/forgot`,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ tenantCode: 'bench', identifier }),
          })
        }
      }
    }
    // POST /signup, each request with its own solved proof of work (made before the loop) and address.
    if (signups) {
      let s = 0
      rows.signup = await run('POST /signup', {
        url: `${BASE}/api/v1/signup`,
        method: 'POST',
        requests: [
          {
            setupRequest: (req) => {
              const i = s++
              return {
                ...req,
                headers: {
                  'content-type': 'application/json',
                  'x-publishable-key': signups.key,
                  origin: SIGNUP_ORIGIN,
                  'x-forwarded-for': benchIp(i),
                },
                body: JSON.stringify({
                  email: `signup${i}@example.test`,
                  password: PASSWORD,
                  altcha: signups.payloads[i % signups.payloads.length],
                }),
              }
            },
          },
        ],
      })
    }
    const printOidc = OIDC_WORKLOADS.some(wanted)
      ? await oidcBench({
          ...{ origin: BASE, db: opened.db, tenant, passwordHash: hash, password: PASSWORD },
          ...{ serverPid, seconds: SECONDS, wanted },
        })
      : undefined
    clearInterval(sampler)
    report(bcryptRate, bareRow, rows, peakRss)
    printOidc?.(fmt)
    if (process.env.WORKERS && process.env.WORKERS !== '1') {
      console.log(
        `  WORKERS=${process.env.WORKERS}: peak RSS ${peakRss.toFixed(0)} MB in total, ${peakRssPerProcess.toFixed(0)} MB per process at most`,
      )
    }
    if (wanted('signing')) await signingCosts()
  } finally {
    if (child) {
      child.kill('SIGTERM')
      await new Promise((r) => child?.once('exit', r))
    }
    await opened.close()
    await admin(`drop database if exists ${dbName} with (force)`)
    rmSync(SERVER_LOG, { force: true })
  }
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
