// The peer of the OpenID provider rows: Better Auth 1.7.25 with @better-auth/oauth-provider
// (bench/peers/better-auth-oauth/), on the same PostgreSQL as the service, in a throw-away database. bench/oidc.ts
// runs it when BENCH_PEER=1 (`make bench-oidc-peer`); its node_modules are installed on first use (`npm ci`).
import { execSync, spawn } from 'node:child_process'
import { existsSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { Browser, follow, authorizeUrl, codeOf, type OidcTarget } from './oidc-flow.js'
import { measure, type OidcWorkload, type TargetResult, type XactCounter } from './oidc-workloads.js'

const DIR = 'bench/peers/better-auth-oauth'
const PORT = 4110
const ORIGIN = `http://127.0.0.1:${PORT}`
// Why https on a name: the plugin takes http only on loopback for a native client, and a web client's URI must
// be https off loopback. The bench never visits it (follow() stops at the redirect), so nothing leaves loopback.
const REDIRECT = 'https://bench.example.test/cb'
const CONNECTIONS = 10

async function admin(server: URL, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: server.toString() })
  await c.connect()
  await c.query(sql)
  await c.end()
}

async function waitFor(url: string, log: string): Promise<void> {
  for (let i = 0; i < 150; i++) {
    try {
      if ((await fetch(url)).ok) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(
    `the Better Auth peer did not start; its log ends:\n${readFileSync(log, 'utf8').slice(-2000)}`,
  )
}

/** A user signed up through Better Auth's public API (its session cookie kept), in a browser of its own. */
async function signedUp(i: number): Promise<Browser> {
  const b = new Browser(ORIGIN)
  const res = await b.fetch('/api/auth/sign-up/email', {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: ORIGIN },
    body: JSON.stringify({ email: `peer${i}@example.test`, password: 'bench-password-9', name: `Peer ${i}` }),
  })
  if (res.status !== 200) throw new Error(`sign-up answered ${res.status} ${await res.text()}`)
  return b
}

/** Starts the peer, seeds a client and the users, measures, stops it and drops its database. */
export async function peerResult(
  wanted: (w: OidcWorkload) => boolean,
  seconds: number,
): Promise<TargetResult> {
  if (!existsSync(join(DIR, 'node_modules')))
    execSync('npm ci --no-audit --no-fund', { cwd: DIR, stdio: 'inherit' })
  const server = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres')
  const dbName = `bench_peer_oauth_${randomUUID().slice(0, 8)}`
  const dbUrl = new URL(server.toString())
  dbUrl.pathname = `/${dbName}`
  const log = join(tmpdir(), `${dbName}.log`)
  await admin(server, `create database ${dbName}`)
  const child = spawn(process.execPath, ['server.mjs'], {
    cwd: DIR,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: dbUrl.toString(),
      PORT: String(PORT),
      BENCH_SEED: '1',
    },
    stdio: ['ignore', openSync(log, 'w'), openSync(log, 'a')],
  })
  try {
    await waitFor(`${ORIGIN}/health`, log)
    const browsers: Browser[] = []
    for (let i = 0; i < CONNECTIONS; i++) browsers.push(await signedUp(i))
    const made = await fetch(`${ORIGIN}/bench/client`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: browsers[0]?.cookieHeader() ?? '' },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }),
    })
    const client = (await made.json()) as { client_id: string; client_secret: string }
    if (made.status !== 201) throw new Error(`the peer's client: ${made.status} ${JSON.stringify(client)}`)
    const target: OidcTarget = {
      label: 'Better Auth',
      origin: ORIGIN,
      paths: {
        authorize: '/api/auth/oauth2/authorize',
        token: '/api/auth/oauth2/token',
        userinfo: '/api/auth/oauth2/userinfo',
        introspection: '/api/auth/oauth2/introspect',
      },
      clientId: client.client_id,
      clientSecret: client.client_secret,
      redirectUri: REDIRECT,
      scope: 'openid email profile offline_access',
      pid: child.pid,
      introspectionExtra: { token_type_hint: 'access_token' },
    }
    // A first authorization each, checked: the session is accepted and the code comes without a screen.
    for (const b of browsers) codeOf(target, await follow(b, target, authorizeUrl(target)))
    const stats = new pg.Client({ connectionString: dbUrl.toString() })
    await stats.connect()
    const xacts: XactCounter = async () =>
      Number(
        (
          await stats.query(
            'select xact_commit as n from pg_stat_database where datname = current_database()',
          )
        ).rows[0]?.n ?? 0,
      )
    try {
      return await measure(target, browsers, wanted, seconds, xacts)
    } finally {
      await stats.end()
    }
  } finally {
    child.kill('SIGTERM')
    await new Promise((r) => child.once('exit', r))
    await admin(server, `drop database if exists ${dbName} with (force)`)
    rmSync(log, { force: true })
  }
}
