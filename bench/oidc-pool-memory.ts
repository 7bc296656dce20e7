/**
 * The provider pool's memory (`make bench-oidc-pool`): POOL_TENANTS (default 1,000) tenants, each with a
 * confidential client and one user, and one authorization each through a running service: the user signs in
 * (POST /login), the code flow runs in a browser of its own (authorize, the interaction's login and consent),
 * and the code is exchanged. Each tenant's first request builds its provider (src/modules/oidc/pool.ts: an LRU of
 * 200, the pool's DEFAULT_MAX; no environment variable sets it). Prints the server's RSS and V8 heap before,
 * at checkpoints and at the end, each before and after a full GC (asked through the inspector, on loopback).
 *
 * BENCH_DATABASE_URL as for `make bench`; a throw-away database is created and dropped.
 */
import { execSync, spawn, type ChildProcess } from 'node:child_process'
import { openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { WebSocket } from 'undici'
import { openPostgres } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { provisionTenant } from '../src/modules/tenants/provision.js'
import { insertOAuthClient } from '../src/modules/oauth-clients/queries.js'
import { createPasswordHasher } from '../src/lib/hashing.js'
import { sha256Hex } from '../src/lib/tokens.js'
import { Browser, authorizeUrl, codeOf, exchange, follow, type OidcTarget } from './oidc-flow.js'
import { rssOf, startFlags } from './proc.js'

const TENANTS = Number(process.env.POOL_TENANTS ?? 1000)
const CHECKPOINTS = [200, 500, TENANTS].filter((n) => n <= TENANTS)
const PARALLEL = 4
const PORT = 3927
const INSPECT = 9339
const ORIGIN = `http://127.0.0.1:${PORT}`
const PASSWORD = 'bench-password-9'
const SECRET = 'bench-pool-client-secret-0123456789abcdef'
const REDIRECT = 'http://127.0.0.1:9/cb'
const server = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres')
const dbName = `tessera_pool_${randomUUID().slice(0, 8)}`
const dbUrl = new URL(server.toString())
dbUrl.pathname = `/${dbName}`
const LOG = join(tmpdir(), `${dbName}.server.log`)

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: server.toString() })
  await c.connect()
  await c.query(sql)
  await c.end()
}

/** The server's inspector: a full GC and the heap's figures, on loopback. */
async function inspector() {
  const list = (await (await fetch(`http://127.0.0.1:${INSPECT}/json/list`)).json()) as {
    webSocketDebuggerUrl: string
  }[]
  const ws = new WebSocket(list[0]?.webSocketDebuggerUrl ?? '')
  await new Promise((resolve, reject) => {
    ws.addEventListener('open', resolve, { once: true })
    ws.addEventListener('error', reject, { once: true })
  })
  let id = 0
  const send = (method: string) =>
    new Promise<Record<string, number>>((resolve) => {
      const mine = ++id
      const on = (ev: { data: unknown }) => {
        const msg = JSON.parse(String(ev.data)) as { id?: number; result?: Record<string, number> }
        if (msg.id !== mine) return
        ws.removeEventListener('message', on)
        resolve(msg.result ?? {})
      }
      ws.addEventListener('message', on)
      ws.send(JSON.stringify({ id: mine, method }))
    })
  return {
    heapMb: async () => ((await send('Runtime.getHeapUsage')).usedSize ?? 0) / 1024 / 1024,
    gc: () => send('HeapProfiler.collectGarbage'),
    close: () => ws.close(),
  }
}

type Inspector = Awaited<ReturnType<typeof inspector>>
async function checkpoint(label: string, pid: number, insp: Inspector): Promise<void> {
  const rss = rssOf(pid)
  const heap = await insp.heapMb()
  await insp.gc()
  await new Promise((r) => setTimeout(r, 500))
  const line =
    `${label.padEnd(34)} RSS ${rss.toFixed(0).padStart(4)} MB, heap ${heap.toFixed(0).padStart(4)} MB` +
    `  | after a full GC: RSS ${rssOf(pid).toFixed(0).padStart(4)} MB, heap ${(await insp.heapMb()).toFixed(0).padStart(4)} MB`
  console.log(line)
}

/** One tenant's authorization: sign-in, the code flow in a fresh browser, the code exchanged. */
async function authorizeOnce(i: number, clientId: string): Promise<void> {
  const code = `pool${String(i).padStart(4, '0')}`
  const login = await fetch(`${ORIGIN}/api/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tenantCode: code, identifier: `${code}@example.test`, password: PASSWORD }),
  })
  if (login.status !== 200) throw new Error(`login ${code}: ${login.status} ${await login.text()}`)
  const token = ((await login.json()) as { data: { accessToken: string } }).data.accessToken
  const t: OidcTarget = {
    label: code,
    origin: ORIGIN,
    paths: {
      authorize: `/t/${code}/auth`,
      token: `/t/${code}/token`,
      userinfo: `/t/${code}/me`,
      introspection: `/t/${code}/token/introspection`,
    },
    clientId,
    clientSecret: SECRET,
    redirectUri: REDIRECT,
    scope: 'openid email profile offline_access',
  }
  const b = new Browser(ORIGIN)
  let at = await follow(b, t, authorizeUrl(t))
  for (const [step, body] of [
    ['login', undefined],
    ['consent', { approve: true }],
  ] as const) {
    if (!at.pathname.includes('/interaction/')) break
    const res = await b.fetch(`${at.pathname}/${step}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    })
    const text = await res.text()
    if (res.status !== 200) throw new Error(`${code} ${step}: ${res.status} ${text}`)
    at = await follow(b, t, String((JSON.parse(text) as { data: { redirectTo: string } }).data.redirectTo))
  }
  await exchange(t, codeOf(t, at))
}

async function main(): Promise<void> {
  await admin(`create database ${dbName}`)
  const opened = openPostgres(dbUrl.toString(), { poolMax: 4 })
  let child: ChildProcess | undefined
  let insp: Inspector | undefined
  try {
    await migrateToLatest(opened.db)
    const hasher = createPasswordHasher({ cost: 12 })
    const passwordHash = await hasher.hash(PASSWORD)
    await hasher.close()
    const clients: string[] = []
    const seeded = performance.now()
    for (let i = 0; i < TENANTS; i++) {
      const code = `pool${String(i).padStart(4, '0')}`
      const { tenant } = await provisionTenant(opened.db, {
        code,
        name: `Pool ${i}`,
        authConfig: { rateLimits: { requestsPerMinute: 10_000_000, loginPerMinute: 10_000_000 } },
        admin: { email: `${code}@example.test`, username: null, cpf_cnpj: null, passwordHash },
      })
      const client = await insertOAuthClient(opened.db, {
        tenant_id: tenant.id,
        client_id: `pool-client-${String(i).padStart(6, '0')}`,
        name: 'Pool app',
        type: 'confidential',
        token_endpoint_auth_method: 'client_secret_basic',
        redirect_uris: JSON.stringify([REDIRECT]),
        post_logout_redirect_uris: JSON.stringify([]),
        grant_types: JSON.stringify(['authorization_code', 'refresh_token']),
        scopes: JSON.stringify(['openid', 'profile', 'email', 'offline_access']),
        first_party: false,
        secret_hash: sha256Hex(SECRET),
      })
      clients.push(client.client_id)
    }
    console.log(
      `seeded ${TENANTS} tenants, a client each, in ${((performance.now() - seeded) / 1000).toFixed(1)} s`,
    )

    execSync('npm run build --silent', { stdio: 'inherit' })
    child = spawn(process.execPath, [...startFlags(), `--inspect=127.0.0.1:${INSPECT}`, 'dist/server.js'], {
      env: {
        ...process.env,
        DATABASE_URL: dbUrl.toString(),
        PORT: String(PORT),
        LOG_LEVEL: 'warn',
        NODE_ENV: 'development',
        SECRETS_KEY: 'bench-secrets-key-0123456789abcdef0123',
      },
      stdio: ['ignore', openSync(LOG, 'w'), openSync(LOG, 'a')],
    })
    const pid = child.pid ?? 0
    for (let i = 0; ; i++) {
      if (i > 100) throw new Error(`server did not start:\n${readFileSync(LOG, 'utf8').slice(-2000)}`)
      if (
        await fetch(`${ORIGIN}/api/v1/health`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break
      await new Promise((r) => setTimeout(r, 200))
    }
    insp = await inspector()
    await checkpoint('started, no provider yet', pid, insp)
    let next = 0
    let done = 0
    let peakRss = 0
    const started = performance.now()
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssOf(pid))), 200)
    for (const upTo of CHECKPOINTS) {
      await Promise.all(
        Array.from({ length: PARALLEL }, async () => {
          while (next < upTo) {
            const i = next++
            await authorizeOnce(i, clients[i] ?? '')
            done++
          }
        }),
      )
      await checkpoint(`after ${done} tenants' authorizations`, pid, insp)
    }
    clearInterval(sampler)
    const secs = (performance.now() - started) / 1000
    console.log(
      `\n${done} authorizations (sign-in, code flow, exchange) in ${secs.toFixed(0)} s; peak RSS ${peakRss.toFixed(0)} MB`,
    )
    console.log(
      'the pool: an LRU of 200 providers (src/modules/oidc/pool.ts DEFAULT_MAX; no environment variable)',
    )
  } finally {
    insp?.close()
    if (child) {
      child.kill('SIGTERM')
      await new Promise((r) => child?.once('exit', r))
    }
    await opened.close()
    await admin(`drop database if exists ${dbName} with (force)`)
    rmSync(LOG, { force: true })
  }
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
