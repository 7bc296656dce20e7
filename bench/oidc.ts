// The OpenID provider rows of `make bench` (contract section 23): the code exchange, the refresh_token grant,
// userinfo and introspection against a tenant's provider at {PUBLIC_URL}/t/bench, beside the same workloads
// against the bare library (bench/oidc-ceiling.ts, the same run) and, with BENCH_PEER=1, against Better Auth's
// OAuth provider plugin (bench/oidc-peer.ts). bench/auth.ts calls oidcBench once the service listens.
//
// The code exchange: codes are single-use and live 60 s, so each run first mints codes from signed-in browsers
// (one session and grant per connection: an authorization request answered with the callback's redirect) for
// BENCH_SECONDS (at most 20 s), then exchanges each once; the row is the exchange alone, and the minting's rate
// (authorization requests a second) is printed beside it.
import { spawn, type ChildProcess } from 'node:child_process'
import { sql, type Kysely } from 'kysely'
import type { Database } from '../src/db/database.js'
import { insertUserRoles } from '../src/modules/roles/queries.js'
import { Browser, CEILING_CLIENT, follow, authorizeUrl, codeOf, type OidcTarget } from './oidc-flow.js'
import {
  measure,
  OIDC_WORKLOADS,
  type OidcWorkload,
  type Row,
  type TargetResult,
  type XactCounter,
} from './oidc-workloads.js'
import { startFlags } from './proc.js'

export { OIDC_WORKLOADS }

const CONNECTIONS = 10
const CEILING_PORT = 3919
const REDIRECT = 'http://127.0.0.1:9/cb'
const SCOPE = 'openid email profile offline_access'

interface Seeded {
  origin: string
  db: Kysely<Database>
  tenant: { id: string; code: string }
  passwordHash: string
  password: string
  serverPid: number | undefined
  seconds: number
  wanted: (name: string) => boolean
}

async function json(res: Response): Promise<{ data?: Record<string, unknown> } & Record<string, unknown>> {
  const text = await res.text()
  if (!res.ok) throw new Error(`${res.url}: ${res.status} ${text}`)
  return JSON.parse(text) as { data?: Record<string, unknown> }
}

async function login(s: Seeded, email: string): Promise<string> {
  const res = await fetch(`${s.origin}/api/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tenantCode: s.tenant.code, identifier: email, password: s.password }),
  })
  return String((await json(res)).data?.accessToken)
}

/** A confidential client of the bench tenant, made through the API (POST /oauth/clients) by an admin. */
async function serviceClient(s: Seeded): Promise<{ clientId: string; clientSecret: string }> {
  const email = 'oidc-admin@example.test'
  const admin = await s.db
    .insertInto('users')
    .values({ tenant_id: s.tenant.id, email, password_hash: s.passwordHash })
    .returning('id')
    .executeTakeFirstOrThrow()
  const role = await s.db
    .selectFrom('roles')
    .select('id')
    .where('tenant_id', '=', s.tenant.id)
    .where('name', '=', 'admin')
    .executeTakeFirstOrThrow()
  await insertUserRoles(s.db, s.tenant.id, admin.id, [role.id])
  const res = await fetch(`${s.origin}/api/v1/oauth/clients`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${await login(s, email)}` },
    body: JSON.stringify({ name: 'Bench app', type: 'confidential', redirectUris: [REDIRECT] }),
  })
  const data = (await json(res)).data ?? {}
  return { clientId: String(data.clientId), clientSecret: String(data.clientSecret) }
}

/** A browser signed in to the service's provider with its grant: the sign-in page's calls, then the consent. */
async function serviceBrowser(s: Seeded, t: OidcTarget, email: string): Promise<Browser> {
  const b = new Browser(s.origin)
  const token = await login(s, email)
  let at = await follow(b, t, authorizeUrl(t))
  for (const [step, body] of [
    ['login', undefined],
    ['consent', { approve: true }],
  ] as const) {
    if (!at.pathname.includes('/interaction/')) break
    const res = await b.fetch(`${at.pathname}/${step}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    })
    const redirectTo = (await json(res)).data?.redirectTo
    at = await follow(b, t, String(redirectTo))
  }
  codeOf(t, at)
  return b
}

/** The bare library in a process of its own, run with the service's node flags. */
async function startCeiling(): Promise<{ child: ChildProcess; pid: number }> {
  const child = spawn(process.execPath, [...startFlags(), '--import', 'tsx', 'bench/oidc-ceiling.ts'], {
    env: { ...process.env, PORT: String(CEILING_PORT), NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const pid = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the ceiling's server exited (${code})`)))
    child.stdout?.once('data', (chunk: Buffer) => resolve(Number(JSON.parse(chunk.toString()).pid)))
  })
  return { child, pid }
}

/** A browser signed in to the bare library: its interaction signs in and grants on the first visit. */
async function ceilingBrowser(t: OidcTarget): Promise<Browser> {
  const b = new Browser(t.origin)
  const at = await follow(b, t, authorizeUrl(t))
  codeOf(t, at.pathname.startsWith('/interaction/') ? await follow(b, t, at.pathname) : at)
  return b
}

const stop = async (child: ChildProcess) => {
  if (child.exitCode !== null) return
  child.removeAllListeners('exit')
  child.kill('SIGTERM')
  await new Promise((r) => child.once('exit', r))
}

/** Runs the wanted OpenID workloads on the service, the bare library and (BENCH_PEER=1) Better Auth. */
export async function oidcBench(s: Seeded): Promise<(fmt: (r: Row) => string) => void> {
  const wanted = (w: OidcWorkload) => s.wanted(w)
  const { clientId, clientSecret } = await serviceClient(s)
  const service: OidcTarget = {
    label: 'service',
    origin: s.origin,
    paths: {
      authorize: `/t/${s.tenant.code}/auth`,
      token: `/t/${s.tenant.code}/token`,
      userinfo: `/t/${s.tenant.code}/me`,
      introspection: `/t/${s.tenant.code}/token/introspection`,
    },
    clientId,
    clientSecret,
    redirectUri: REDIRECT,
    scope: SCOPE,
    pid: s.serverPid,
  }
  const emails = Array.from({ length: CONNECTIONS }, (_, i) => `bench${i}@example.test`)
  const browsers = await Promise.all(emails.map((e) => serviceBrowser(s, service, e)))
  const xacts: XactCounter = async () =>
    Number(
      (
        await sql<{
          n: string
        }>`select xact_commit as n from pg_stat_database where datname = current_database()`.execute(s.db)
      ).rows[0]?.n ?? 0,
    )
  const results: TargetResult[] = [await measure(service, browsers, wanted, s.seconds, xacts)]

  const ceiling = await startCeiling()
  try {
    const target: OidcTarget = {
      label: 'bare oidc-provider',
      origin: `http://127.0.0.1:${CEILING_PORT}`,
      paths: {
        authorize: '/auth',
        token: '/token',
        userinfo: '/me',
        introspection: '/token/introspection',
      },
      clientId: CEILING_CLIENT.client_id,
      clientSecret: CEILING_CLIENT.client_secret,
      redirectUri: REDIRECT,
      scope: SCOPE,
      pid: ceiling.pid,
    }
    const bs = await Promise.all(emails.map(() => ceilingBrowser(target)))
    results.push(await measure(target, bs, wanted, s.seconds))
  } finally {
    await stop(ceiling.child)
  }
  if (process.env.BENCH_PEER === '1') {
    const { peerResult } = await import('./oidc-peer.js')
    results.push(await peerResult(wanted, s.seconds))
  }
  return (fmt) => printOidc(results, fmt)
}

function printOidc(results: TargetResult[], fmt: (r: Row) => string): void {
  const [service, ceiling, peer] = results
  console.log('\nOpenID provider (a tenant at /t/bench; the bare library; Better Auth with BENCH_PEER=1):')
  for (const r of results) {
    for (const row of Object.values(r.rows)) {
      const per = `server CPU ${row.cpuMsPerRequest?.toFixed(3)} ms/req`
      const xacts =
        row.xactsPerRequest === undefined ? '' : `, ${row.xactsPerRequest.toFixed(1)} db xacts/req`
      console.log(`  ${fmt(row)}  (${per}${xacts})`)
    }
    if (r.mint)
      console.log(
        `  (${r.target.label}: ${r.mint.codes} codes minted at ${r.mint.perSecond.toFixed(0)} authorization requests/s before the exchange)`,
      )
  }
  console.log('\nOpenID ratios (by req/s; by server CPU per request) and targets:')
  for (const w of OIDC_WORKLOADS) {
    const ours = service?.rows[w]
    if (!ours) continue
    const ratio = (other: Row | undefined, asPct: boolean) => {
      if (!other) return 'n/a'
      const byRate = ours.rps / other.rps
      const byCpu = (other.cpuMsPerRequest ?? NaN) / (ours.cpuMsPerRequest ?? NaN)
      return asPct
        ? `${(byRate * 100).toFixed(0)}%; ${(byCpu * 100).toFixed(0)}%`
        : `${byRate.toFixed(2)}x; ${byCpu.toFixed(2)}x`
    }
    const peerTarget = w === 'refreshGrant' || w === 'userinfo' ? ' (target >= 2x)' : ''
    console.log(
      `  ${w.padEnd(14)} service / bare library ${ratio(ceiling?.rows[w], true).padStart(9)} (target >= 60%)` +
        (peer ? `   service / Better Auth ${ratio(peer.rows[w], false)}${peerTarget}` : ''),
    )
  }
}
