// The OpenID provider workloads of `make bench` (bench/oidc.ts), one driver for every target (the service, the
// bare library, Better Auth's OAuth provider): autocannon with 10 connections, every response checked.
import autocannon from 'autocannon'
import { basic, exchange, form, mintCodes, VERIFIER, type Browser, type OidcTarget } from './oidc-flow.js'
import { postgresTicks, ticksOf, withChildren } from './proc.js'

export const OIDC_WORKLOADS = ['codeExchange', 'refreshGrant', 'userinfo', 'introspection'] as const
export type OidcWorkload = (typeof OIDC_WORKLOADS)[number]

const CONNECTIONS = 10
const TICK_MS = 10 // USER_HZ is 100 on Linux
// Why capped: the service's codes live 60 s, and the exchange of the last one minted follows the minting.
const MAX_MINT_SECONDS = 20

/** A row as bench/auth.ts prints it. */
export interface Row {
  name: string
  rps: number
  p50: number
  p99: number
  errors: number
  /** CPU the target's server used during the run, in % of one core. */
  serverCpu: number
  /** CPU of every PostgreSQL process during the run, in % of one core. */
  pgCpu: number
  /** Server CPU per request, in ms. */
  cpuMsPerRequest?: number
  /** Transactions the target's database committed per request (each autocommit statement is one). */
  xactsPerRequest?: number
}

/** Transactions committed so far in the target's database (pg_stat_database), when it has one. */
export type XactCounter = () => Promise<number>

/** What one target measured: its rows, and the authorization requests a second that minted the codes. */
export interface TargetResult {
  target: OidcTarget
  rows: Partial<Record<OidcWorkload, Row>>
  mint?: { perSecond: number; codes: number }
}

/** Tallies the checks of a run: autocannon counts only non-2xx, this counts every wrong answer. */
interface Tally {
  failed: number
  first?: string
}
const fail = (tally: Tally, why: string) => {
  tally.failed++
  tally.first ??= why
}

async function run(
  t: OidcTarget,
  name: string,
  opts: autocannon.Options,
  tally: Tally,
  xacts?: XactCounter,
): Promise<Row> {
  const pid = t.pid ?? process.pid
  const serverTicks = () => withChildren(pid).reduce((n, p) => n + ticksOf(p), 0)
  const xactsBefore = xacts ? await settled(xacts) : 0
  const before = { server: serverTicks(), pg: postgresTicks() }
  const started = performance.now()
  const result = await autocannon({ connections: CONNECTIONS, ...opts })
  const elapsed = performance.now() - started
  const pct = (ticks: number) => Math.max(0, ((ticks * TICK_MS) / elapsed) * 100)
  if (tally.first)
    console.error(`  ${t.label} ${name}: ${tally.failed} failed checks, the first: ${tally.first}`)
  const server = serverTicks() - before.server
  const pgTicks = postgresTicks() - before.pg
  const total = result.requests.total
  // Two of the counted transactions are the counter's own reads.
  const xactsAfter = xacts ? await settled(xacts) : 0
  return {
    cpuMsPerRequest: total ? (server * TICK_MS) / total : NaN,
    xactsPerRequest: xacts && total ? (xactsAfter - xactsBefore - 2) / total : undefined,
    name: `${name} (${t.label})`,
    // Why total over time: a run bounded by `amount` (the code exchange) may last a second or two.
    rps: result.requests.total / (elapsed / 1000),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: Math.max(tally.failed, result.non2xx) + result.errors + result.timeouts,
    serverCpu: pct(server),
    pgCpu: pct(pgTicks),
  }
}

/** The counter once PostgreSQL's statistics have caught up (backends flush them about once a second). */
async function settled(xacts: XactCounter): Promise<number> {
  await new Promise((r) => setTimeout(r, 1500))
  return xacts()
}

const parse = (body: string): Record<string, unknown> | undefined => {
  try {
    return JSON.parse(body) as Record<string, unknown>
  } catch {
    return undefined
  }
}
const isJwt = (v: unknown) => typeof v === 'string' && v.split('.').length === 3
const tokenShape = (b: Record<string, unknown> | undefined, idToken: boolean): string | undefined => {
  if (!b) return 'not JSON'
  if (typeof b.access_token !== 'string' || b.access_token.length < 16) return 'no access_token'
  if (String(b.token_type).toLowerCase() !== 'bearer') return `token_type ${String(b.token_type)}`
  if (typeof b.expires_in !== 'number') return 'no expires_in'
  if (typeof b.refresh_token !== 'string' || b.refresh_token.length < 16) return 'no refresh_token'
  if (idToken && !isJwt(b.id_token)) return 'no id_token'
  return undefined
}

/**
 * Runs the workloads against one target whose browsers are signed in with a grant: codes minted first (for up
 * to `seconds`, then exchanged, each once, `amount`-bound), then a refresh chain, userinfo and introspection
 * with the tokens of the first exchanges.
 */
export async function measure(
  t: OidcTarget,
  browsers: Browser[],
  wanted: (w: OidcWorkload) => boolean,
  seconds: number,
  xacts?: XactCounter,
): Promise<TargetResult> {
  const expectIdToken = true
  const out: TargetResult = { target: t, rows: {} }
  const tokenHeaders = { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(t) }
  // The tokens the other workloads use: one code exchange per browser (outside the measured runs).
  const seed = await mintCodes(t, browsers, CONNECTIONS, 60)
  const tokens = await Promise.all(seed.codes.map((c) => exchange(t, c)))
  const subs = await Promise.all(tokens.map((tk) => userinfoSub(t, tk.accessToken)))

  if (wanted('codeExchange')) {
    const minted = await mintCodes(t, browsers, Infinity, Math.min(seconds, MAX_MINT_SECONDS))
    out.mint = { perSecond: minted.perSecond, codes: minted.codes.length }
    const codes = minted.codes
    const tally: Tally = { failed: 0 }
    out.rows.codeExchange = await run(
      t,
      'POST token: code exchange',
      {
        url: new URL(t.paths.token, t.origin).href,
        method: 'POST',
        headers: tokenHeaders,
        amount: codes.length,
        requests: [
          {
            setupRequest: (req) => ({
              ...req,
              body: form({
                grant_type: 'authorization_code',
                code: codes.pop() ?? 'none-left',
                redirect_uri: t.redirectUri,
                code_verifier: VERIFIER,
              }),
            }),
            onResponse: (status, body) => {
              const why = status === 200 ? tokenShape(parse(body), expectIdToken) : `${status} ${body}`
              if (why) fail(tally, why)
            },
          },
        ],
      },
      tally,
      xacts,
    )
  }

  if (wanted('refreshGrant')) {
    // One chain per connection: each request takes a live token, and its answer's rotated successor goes back.
    // (autocannon resets a connection's context between request sequences, so the chain cannot live there.)
    const live = tokens.map((tk) => tk.refreshToken)
    const tally: Tally = { failed: 0 }
    // Every token sent: an answer whose refresh token is one of them was not rotated.
    const sent = new Set<string>()
    out.rows.refreshGrant = await run(
      t,
      'POST token: refresh_token',
      {
        url: new URL(t.paths.token, t.origin).href,
        method: 'POST',
        headers: tokenHeaders,
        duration: seconds,
        requests: [
          {
            setupRequest: (req) => {
              const token = live.shift() ?? 'none-left'
              sent.add(token)
              return { ...req, body: form({ grant_type: 'refresh_token', refresh_token: token }) }
            },
            onResponse: (status, body) => {
              const b = parse(body)
              const why = status === 200 ? tokenShape(b, expectIdToken) : `${status} ${body}`
              if (why) return fail(tally, why)
              const next = String(b?.refresh_token)
              if (sent.has(next)) return fail(tally, 'the refresh token was not rotated')
              live.push(next)
            },
          },
        ],
      },
      tally,
      xacts,
    )
  }

  let i = 0
  if (wanted('userinfo')) {
    const tally: Tally = { failed: 0 }
    out.rows.userinfo = await run(
      t,
      'GET userinfo',
      {
        url: new URL(t.paths.userinfo, t.origin).href,
        duration: seconds,
        requests: [
          {
            setupRequest: (req) => {
              const k = i++ % tokens.length
              return { ...req, headers: { authorization: `Bearer ${tokens[k]?.accessToken}` } }
            },
            onResponse: (status, body) => {
              const b = parse(body)
              if (status !== 200) return fail(tally, `${status} ${body}`)
              if (typeof b?.sub !== 'string' || !subs.includes(b.sub)) fail(tally, `sub ${String(b?.sub)}`)
              if (typeof b?.email !== 'string') fail(tally, 'no email claim')
            },
          },
        ],
      },
      tally,
      xacts,
    )
  }

  if (wanted('introspection')) {
    const tally: Tally = { failed: 0 }
    out.rows.introspection = await run(
      t,
      'POST introspection',
      {
        url: new URL(t.paths.introspection, t.origin).href,
        method: 'POST',
        headers: tokenHeaders,
        duration: seconds,
        requests: [
          {
            setupRequest: (req) => ({
              ...req,
              body: form({ token: tokens[i++ % tokens.length]?.accessToken ?? '', ...t.introspectionExtra }),
            }),
            onResponse: (status, body) => {
              const b = parse(body)
              if (status !== 200) return fail(tally, `${status} ${body}`)
              if (b?.active !== true) return fail(tally, `active ${String(b?.active)}`)
              if (b.client_id !== t.clientId) fail(tally, `client_id ${String(b.client_id)}`)
              if (typeof b.sub !== 'string' || !subs.includes(b.sub)) fail(tally, `sub ${String(b.sub)}`)
            },
          },
        ],
      },
      tally,
      xacts,
    )
  }
  return out
}

/** The `sub` userinfo gives for an access token (the seeding's check that the token works). */
async function userinfoSub(t: OidcTarget, accessToken: string): Promise<string> {
  const res = await fetch(new URL(t.paths.userinfo, t.origin), {
    headers: { authorization: `Bearer ${accessToken}` },
  })
  const text = await res.text()
  const sub = res.status === 200 ? parse(text)?.sub : undefined
  if (typeof sub !== 'string') throw new Error(`${t.label}: userinfo answered ${res.status} ${text}`)
  return sub
}
