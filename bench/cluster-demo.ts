/**
 * Cluster demo on loopback (`make cluster-demo`, docs/operations.md): three instances started as
 * `npm start` starts them, one throw-away PostgreSQL database and Redis shared, HAProxy in front (a config
 * generated from deploy/haproxy/haproxy.cfg), load through it while one instance is SIGKILLed (then
 * restarted) and another SIGTERMed; then checks that nothing was lost: one winner per refresh token, no
 * refresh family with two live tokens, one audit row per answered login and refresh. Exits 1 on a FAIL.
 *
 * CLUSTER_SECONDS (default 25) sets the load's length; CLUSTER_BASE_PORT (default 4100) the ports: HAProxy
 * on it, the instances on the next three, HAProxy's stats on +9. CLUSTER_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/postgres) names the server the database is created on; REDIS_URL
 * (default redis://127.0.0.1:6379) the Redis. HAPROXY (default haproxy on PATH, then /usr/sbin/haproxy).
 */
import { execFileSync, execSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomInt, randomUUID } from 'node:crypto'
import pg from 'pg'
import { Agent, request } from 'undici'
import { openPostgres } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { provisionTenant } from '../src/modules/tenants/provision.js'
import { openSession } from '../src/modules/sessions/open.js'
import { createPasswordHasher } from '../src/lib/hashing.js'
import { runLoad, summarize, type Rec } from './cluster-load.js'
import { checkAll, haproxyRetries, serviceErrors } from './cluster-checks.js'
import { startFlags } from './proc.js'

const SECONDS = Number(process.env.CLUSTER_SECONDS ?? 25)
const BASE_PORT = Number(process.env.CLUSTER_BASE_PORT ?? 4100)
const INSTANCES = 3
const USERS = 150
const PASSWORD = 'cluster-password-9'
const JWT_SECRET = `cluster-demo-jwt-${randomUUID()}`
const SECRETS_KEY = `cluster-demo-secrets-${randomUUID()}`
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const server = new URL(process.env.CLUSTER_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres')
const dbName = `tessera_cluster_${randomUUID().slice(0, 8)}`
const dbUrl = new URL(server.toString())
dbUrl.pathname = `/${dbName}`
const work = mkdtempSync(join(tmpdir(), 'tessera-cluster-'))
// Why fresh loopback addresses: the per-IP counters live in the shared Redis (under this run's own
// REDIS_KEY_PREFIX too), so the client counts under an address no one else uses.
const net = `127.${randomInt(10, 250)}.${randomInt(1, 250)}`
const CLIENT_IP = `${net}.2`
const probe = new Agent({ localAddress: `${net}.3` })
const names = Array.from({ length: INSTANCES }, (_, i) => `t${i + 1}`)
const portOf = (i: number) => BASE_PORT + 1 + i
const STATS = `http://127.0.0.1:${BASE_PORT + 9}/stats;csv`
const children = new Map<string, ChildProcess>()
const log = (msg: string) => console.log(`[${new Date().toISOString().slice(11, 23)}] ${msg}`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: server.toString() })
  await c.connect()
  await c.query(sql)
  await c.end()
}

/** Starts instance i (its log appended to a file) and waits for its /health. */
async function startInstance(i: number): Promise<void> {
  const name = names[i] ?? `t${i + 1}`
  const child = spawn(process.execPath, [...startFlags(), 'dist/server.js'], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(portOf(i)),
      DATABASE_URL: dbUrl.toString(),
      REDIS_URL,
      // This run's counters only: other deployments on the same Redis keep theirs.
      REDIS_KEY_PREFIX: `tessera-demo-${process.pid}:`,
      // HAProxy is on loopback: its X-Forwarded-For is believed, nobody else's.
      TRUST_PROXY: 'loopback',
      JWT_SECRET,
      SECRETS_KEY,
    },
    stdio: ['ignore', openSync(join(work, `${name}.log`), 'a'), 'inherit'],
  })
  children.set(name, child)
  for (let n = 0; n < 150; n++) {
    if (child.exitCode !== null) break
    const ok = await request(`http://127.0.0.1:${portOf(i)}/health`, { dispatcher: probe }).then(
      async (r) => (await r.body.text(), r.statusCode === 200),
      () => false,
    )
    if (ok) return
    await sleep(200)
  }
  throw new Error(
    `${name} did not start; its log ends:\n${readFileSync(join(work, `${name}.log`), 'utf8').slice(-2000)}`,
  )
}

/** Stops a child process: the signal, then SIGKILL if it is still there after `ms`. */
async function stop(name: string, signal: NodeJS.Signals, ms = 12_000): Promise<number> {
  const child = children.get(name)
  children.delete(name)
  if (!child || child.exitCode !== null || child.signalCode !== null) return 0
  const sent = performance.now()
  const exited = new Promise((r) => child.once('exit', r))
  child.kill(signal)
  const timer = setTimeout(() => child.kill('SIGKILL'), ms)
  await exited
  clearTimeout(timer)
  return performance.now() - sent
}

/** The sections of deploy/haproxy/haproxy.cfg by name (`defaults`, `frontend http`, ...). */
function deploySections(): Map<string, string[]> {
  const sections = new Map<string, string[]>()
  let current: string[] = []
  for (const line of readFileSync('deploy/haproxy/haproxy.cfg', 'utf8').split('\n')) {
    if (/^\S/.test(line) && !line.startsWith('#')) sections.set(line.trim(), (current = []))
    else if (line.trim() && !line.trim().startsWith('#')) current.push(line)
  }
  return sections
}

/**
 * The deployment's `defaults` (timeouts, retries, redispatch, retry-on) and frontend rules as they are,
 * with loopback addresses instead of compose's names, round-robin, a 1 s check interval (the deployment's
 * 5 s would take most of the run to notice a death), the answering server's name in X-Served-By, and a log
 * of the abnormal requests only (retries, redispatches, 5xx) carrying the request id.
 */
function haproxyConfig(): string {
  const deploy = deploySections()
  const defaults = deploy.get('defaults')
  const frontend = deploy.get('frontend http')
  if (!defaults || !frontend) throw new Error('deploy/haproxy/haproxy.cfg: no defaults or frontend http')
  return [
    'global',
    '  log stdout format raw local0 info',
    '  maxconn 4096',
    'defaults',
    ...defaults.filter((l) => !/^\s*option httplog/.test(l)),
    '  option dontlog-normal',
    '  log-format "req=%[capture.req.hdr(0)] srv=%b/%s status=%ST retries=%rc term=%ts"',
    'frontend http',
    ...frontend.filter((l) => !/^\s*bind\b/.test(l)),
    `  bind 127.0.0.1:${BASE_PORT}`,
    '  http-request capture req.hdr(x-request-id) len 64',
    'backend tessera',
    '  balance roundrobin',
    '  option httpchk',
    '  http-check send meth GET uri /health ver HTTP/1.1 hdr Host tessera',
    '  http-check expect status 200',
    '  http-response set-header X-Served-By %s',
    '  default-server check inter 1s fall 2 rise 2',
    ...names.map((n, i) => `  server ${n} 127.0.0.1:${portOf(i)} source ${net}.${11 + i}`),
    'listen stats',
    `  bind 127.0.0.1:${BASE_PORT + 9}`,
    '  stats enable',
    '  stats uri /stats',
    '',
  ].join('\n')
}

function haproxyBinary(): string {
  if (process.env.HAPROXY) return process.env.HAPROXY
  try {
    return execSync('command -v haproxy', { encoding: 'utf8' }).trim()
  } catch {
    if (existsSync('/usr/sbin/haproxy')) return '/usr/sbin/haproxy'
    throw new Error('haproxy not found: apt-get install haproxy (or set HAPROXY)')
  }
}

type Row = Record<string, string>
/** HAProxy's stats rows of the backend's servers, by server name. */
async function stats(): Promise<Map<string, Row>> {
  const text = await (await fetch(STATS)).text()
  const [head = '', ...lines] = text.trim().split('\n')
  const cols = head.replace(/^# /, '').split(',')
  const out = new Map<string, Row>()
  for (const line of lines) {
    const row = Object.fromEntries(line.split(',').map((v, i) => [cols[i] ?? String(i), v]))
    if (row.pxname === 'tessera' && row.svname && names.includes(row.svname)) out.set(row.svname, row)
  }
  return out
}

/** When each server's status last changed, as seen by polling the stats every 100 ms. */
function watchStatus() {
  const status = new Map<string, string>()
  const changes: { at: number; server: string; status: string }[] = []
  const timer = setInterval(() => {
    stats().then(
      (rows) => {
        for (const [name, row] of rows) {
          if (status.get(name) === row.status) continue
          status.set(name, row.status ?? '?')
          changes.push({ at: performance.now(), server: name, status: row.status ?? '?' })
        }
      },
      () => undefined,
    )
  }, 100)
  return { changes, stop: () => clearInterval(timer) }
}

async function main(): Promise<number> {
  const cleanup = async () => {
    for (const name of [...children.keys()]) await stop(name, 'SIGTERM')
  }
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => {
      void cleanup().finally(() => process.exit(130))
    })
  const haproxy = haproxyBinary()
  await admin(`create database ${dbName}`)
  const opened = openPostgres(dbUrl.toString(), { poolMax: 4 })
  let failed = true
  try {
    log(`database ${dbName}; seeding ${USERS} users and their sessions`)
    await migrateToLatest(opened.db)
    const hasher = createPasswordHasher({ cost: 12 })
    const hash = await hasher.hash(PASSWORD)
    await hasher.close()
    // Why raised budgets: 429s write no audit row (contract 11); the per-IP limits are tested elsewhere.
    const { tenant } = await provisionTenant(opened.db, {
      code: 'cluster',
      name: 'Cluster demo',
      authConfig: {
        rateLimits: { requestsPerMinute: 10_000_000, loginPerMinute: 10_000_000 },
        maxConcurrentSessions: 1000,
      },
    })
    // One session per user, opened as a login opens it (without its bcrypt compare and LOGIN row).
    const tokens: string[] = []
    const now = new Date()
    for (let i = 0; i < USERS; i++) {
      const { id } = await opened.db
        .insertInto('users')
        .values({ tenant_id: tenant.id, email: `user${i}@cluster.test`, password_hash: hash })
        .returning('id')
        .executeTakeFirstOrThrow()
      const session = await opened.db.transaction().execute((trx) =>
        openSession(trx, {
          tenantId: tenant.id,
          userId: id,
          max: 1000,
          now,
          expiresAt: new Date(now.getTime() + 86_400_000),
          ip: null,
          userAgent: 'cluster-demo seed',
        }),
      )
      if (session) tokens.push(session.refreshToken)
    }

    execSync('npm run build --silent', { stdio: 'inherit' })
    log(
      `starting ${INSTANCES} instances (node ${startFlags().join(' ')} dist/server.js) on ports ${portOf(0)}-${portOf(INSTANCES - 1)}`,
    )
    await Promise.all(names.map((_, i) => startInstance(i)))
    const cfg = join(work, 'haproxy.cfg')
    const haproxyLog = join(work, 'haproxy.log')
    writeFileSync(cfg, haproxyConfig())
    execFileSync(haproxy, ['-c', '-q', '-f', cfg], { stdio: 'inherit' })
    children.set(
      'haproxy',
      spawn(haproxy, ['-db', '-f', cfg], { stdio: ['ignore', openSync(haproxyLog, 'w'), 'inherit'] }),
    )
    for (let n = 0; ; n++) {
      const rows = await stats().catch(() => new Map<string, Row>())
      if (names.every((s) => rows.get(s)?.status === 'UP')) break
      if (n > 100)
        throw new Error(`HAProxy did not see every instance UP:\n${readFileSync(haproxyLog, 'utf8')}`)
      await sleep(100)
    }
    log(`HAProxy ${BASE_PORT} -> ${names.join(', ')} all UP; load for ${SECONDS} s from ${CLIENT_IP}`)

    const watch = watchStatus()
    const t0 = performance.now()
    const events: { at: number; what: string }[] = []
    const at = (share: number, what: string, act: () => Promise<unknown>) =>
      sleep(share * SECONDS * 1000).then(async () => {
        events.push({ at: performance.now(), what })
        log(what)
        await act()
      })
    let drainMs = 0
    const [load] = await Promise.all([
      runLoad({
        base: `http://127.0.0.1:${BASE_PORT}`,
        localAddress: CLIENT_IP,
        tenantCode: 'cluster',
        password: PASSWORD,
        users: USERS,
        tokens,
        seconds: SECONDS,
        refreshLoops: 16,
        loginLoops: 1,
      }),
      at(0.4, 'SIGKILL t2', () => stop('t2', 'SIGKILL')),
      at(0.6, 'restart t2', () => startInstance(1)),
      at(0.75, 'SIGTERM t3 (graceful drain)', async () => (drainMs = await stop('t3', 'SIGTERM'))),
    ])
    await sleep(300)
    watch.stop()
    const finalStats = await stats()
    log('load done; stopping HAProxy and the instances')
    await cleanup()

    const out: string[] = [
      `\nTessera cluster demo: ${INSTANCES} instances behind HAProxy, ${SECONDS} s of load\n`,
    ]
    out.push(...summarize(load.recs, SECONDS))
    out.push(`  families the client lost track of (no answer, or a 401 where a 200 was due): ${load.lost}`)
    out.push('\nTimeline (s from load start) and HAProxy status changes:')
    const rel = (t: number) => ((t - t0) / 1000).toFixed(2).padStart(6)
    const timeline = [
      ...events.map((e) => ({ at: e.at, text: `event  ${e.what}` })),
      ...watch.changes
        .filter((c) => c.at > t0)
        .map((c) => ({ at: c.at, text: `status ${c.server} ${c.status}` })),
    ].sort((a, b) => a.at - b.at)
    for (const t of timeline) out.push(`  ${rel(t.at)}  ${t.text}`)
    const downAfter = (what: string, server: string) => {
      const e = events.find((x) => x.what.startsWith(what))
      const c = watch.changes.find((x) => e && x.server === server && x.status === 'DOWN' && x.at >= e.at)
      return e && c ? `${((c.at - e.at) / 1000).toFixed(2)} s` : 'not seen'
    }
    out.push(`  HAProxy marked t2 DOWN ${downAfter('SIGKILL', 't2')} after its SIGKILL`)
    out.push(
      `  HAProxy marked t3 DOWN ${downAfter('SIGTERM', 't3')} after its SIGTERM; t3 exited after ${(drainMs / 1000).toFixed(2)} s`,
    )
    out.push(
      '\nHAProxy per server (requests, 2xx/4xx/5xx, connection errors, response errors, retries, redispatches):',
    )
    for (const [name, r] of finalStats)
      out.push(
        `  ${name}  ${r.stot} req  ${r.hrsp_2xx}/${r.hrsp_4xx}/${r.hrsp_5xx}  econ ${r.econ}  eresp ${r.eresp}  wretr ${r.wretr}  wredis ${r.wredis}  status ${r.status}`,
      )
    const windowed = (from: number, to: number) =>
      load.recs.filter((r: Rec) => r.at >= from && r.at < to && (r.status === null || r.status >= 500))
    const kill = (events[0]?.at ?? t0) - t0
    out.push(
      `  client-visible errors (no answer, proxy or service 5xx): before the kill ${windowed(0, kill).length}, first 5 s after it ${windowed(kill, kill + 5000).length}, later ${windowed(kill + 5000, Infinity).length}`,
    )
    const retries = haproxyRetries(haproxyLog)
    const result = await checkAll({ dbUrl: dbUrl.toString(), tenantId: tenant.id, load, retries })
    out.push(...serviceErrors(names.map((n) => join(work, `${n}.log`))))
    out.push(...result.lines)
    console.log(out.join('\n'))
    failed = !result.pass
    return failed ? 1 : 0
  } finally {
    await cleanup()
    await opened.close()
    await admin(`drop database if exists ${dbName} with (force)`)
    await probe.close()
    if (failed) console.log(`\nlogs kept in ${work}`)
    else rmSync(work, { recursive: true, force: true })
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err)
    process.exit(1)
  },
)
