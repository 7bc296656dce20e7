// The client side of `make cluster-demo` (bench/cluster-demo.ts): logins, refresh-token rotations (some
// presented twice at once, a deliberate race) and GET /me through the balancer, every request with its
// own X-Request-Id so that each answer can be matched to its audit row afterwards.
import { Agent, request } from 'undici'

export type Kind = 'login' | 'refresh' | 'me'

/** One request as the client saw it. */
export interface Rec {
  id: string
  kind: Kind
  /** The service's status; null when the service's answer never arrived (see `proxyStatus`, `error`). */
  status: number | null
  /** A status HAProxy answered itself (502/503/504 without the service's X-Request-Id). */
  proxyStatus?: number
  error?: string
  /** The instance that answered (HAProxy's X-Served-By). */
  server?: string
  /** When it was sent, in ms since the load started, and how long it took. */
  at: number
  ms: number
  /** Refreshes: the token presented; `race` pairs two requests that presented it at once. */
  token?: string
  race?: number
  /** A refresh sent again because the first got no answer (to learn whether it was consumed). */
  retry?: boolean
  /** Logins: whether the credentials were right (wrong ones must answer 401). */
  valid?: boolean
}

interface Family {
  token: string
  access?: string
}

export interface LoadOptions {
  base: string
  /** The loopback address the client connects from: its per-IP budget is the tenant's raised one. */
  localAddress: string
  tenantCode: string
  password: string
  users: number
  /** Refresh tokens of sessions opened before the run (one family each). */
  tokens: string[]
  seconds: number
  /** Concurrent refresh loops, and login loops (bcrypt-bound: keep it small). */
  refreshLoops: number
  loginLoops: number
}

const RACE_SHARE = 0.1
const ME_SHARE = 0.5
const BAD_LOGIN_SHARE = 0.2
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The load: runs for `seconds`, then returns every request and the families the client still holds. */
export async function runLoad(o: LoadOptions): Promise<{ recs: Rec[]; held: string[]; lost: number }> {
  const agent = new Agent({
    localAddress: o.localAddress,
    connections: 4 * (o.refreshLoops + o.loginLoops),
    headersTimeout: 15_000,
    bodyTimeout: 15_000,
  })
  const run = Math.random().toString(36).slice(2, 8)
  const recs: Rec[] = []
  const idle: Family[] = o.tokens.map((token) => ({ token }))
  let seq = 0
  let races = 0
  let lost = 0
  const t0 = performance.now()
  const end = t0 + o.seconds * 1000

  async function send(
    kind: Kind,
    method: 'GET' | 'POST',
    path: string,
    init: { body?: unknown; bearer?: string },
    extra: Partial<Rec> = {},
  ): Promise<{ rec: Rec; data?: Record<string, string> }> {
    const id = `cd-${run}-${++seq}`
    const start = performance.now()
    const rec: Rec = { id, kind, status: null, at: start - t0, ms: 0, ...extra }
    recs.push(rec)
    const headers: Record<string, string> = { 'x-request-id': id }
    if (init.body !== undefined) headers['content-type'] = 'application/json'
    if (init.bearer) headers.authorization = `Bearer ${init.bearer}`
    try {
      const res = await request(`${o.base}${path}`, {
        dispatcher: agent,
        method,
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      })
      const text = await res.body.text()
      rec.ms = performance.now() - start
      const served = res.headers['x-served-by']
      if (typeof served === 'string') rec.server = served
      // Why: HAProxy's own error pages do not carry the service's echo of the request id.
      if (res.headers['x-request-id'] !== id) {
        rec.proxyStatus = res.statusCode
        return { rec }
      }
      rec.status = res.statusCode
      const json = JSON.parse(text) as { data?: Record<string, string> }
      return { rec, data: json.data }
    } catch (err) {
      rec.ms = performance.now() - start
      rec.error = (err as { code?: string }).code ?? (err as Error).message
      return { rec }
    }
  }

  const refresh = (token: string, extra: Partial<Rec>) =>
    send('refresh', 'POST', '/api/v1/refresh', { body: { refreshToken: token } }, { token, ...extra })

  /** One rotation of a family (or a race of two); false when the client lost track of the family. */
  async function rotate(f: Family): Promise<boolean> {
    const race = Math.random() < RACE_SHARE ? ++races : undefined
    const tries = race
      ? await Promise.all([refresh(f.token, { race }), refresh(f.token, { race })])
      : [await refresh(f.token, {})]
    let win = tries.find((t) => t.rec.status === 200)
    if (!win && tries.some((t) => t.rec.status === null)) {
      // A request without an answer may or may not have consumed the token: ask again, as a client would.
      await sleep(200)
      const again = await refresh(f.token, { retry: true })
      if (again.rec.status === 200) win = again
    }
    if (!win?.data?.refreshToken) return false
    f.token = win.data.refreshToken
    f.access = win.data.accessToken
    return true
  }

  async function refreshLoop(): Promise<void> {
    while (performance.now() < end) {
      const f = idle.shift()
      if (!f) {
        await sleep(5)
        continue
      }
      if (!(await rotate(f))) {
        lost++
        continue
      }
      if (f.access && Math.random() < ME_SHARE) await send('me', 'GET', '/api/v1/me', { bearer: f.access })
      idle.push(f)
    }
  }

  async function loginLoop(): Promise<void> {
    while (performance.now() < end) {
      const valid = Math.random() >= BAD_LOGIN_SHARE
      const identifier = valid
        ? `user${Math.floor(Math.random() * o.users)}@cluster.test`
        : `nobody-${seq}@cluster.test`
      const body = { tenantCode: o.tenantCode, identifier, password: o.password }
      const { rec, data } = await send('login', 'POST', '/api/v1/login', { body }, { valid })
      if (rec.status === 200 && data?.refreshToken) idle.push({ token: data.refreshToken })
      else if (rec.status === null) await sleep(100)
    }
  }

  await Promise.all([
    ...Array.from({ length: o.refreshLoops }, refreshLoop),
    ...Array.from({ length: o.loginLoops }, loginLoop),
  ])
  await agent.close()
  return { recs, held: idle.map((f) => f.token), lost }
}

/** The p-th percentile (0-100) of a list of numbers. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
}

/** Whether an answer is the one this request should get (anything else is a client-visible error). */
export function expected(r: Rec): boolean {
  if (r.status === null) return false
  if (r.kind === 'login') return r.status === (r.valid ? 200 : 401)
  if (r.kind === 'refresh') return r.status === 200 || (r.status === 401 && r.race !== undefined)
  return r.status === 200
}

/** Client-side figures: answers by kind and status, the unanswered, latency and throughput. */
export function summarize(recs: Rec[], seconds: number): string[] {
  const out: string[] = []
  const answered = recs.filter((r) => r.status !== null)
  const fmt = (n: number) => n.toFixed(1).padStart(7)
  out.push(
    `requests sent ${recs.length}, answered by the service ${answered.length}, unanswered ${recs.length - answered.length}`,
  )
  for (const kind of ['login', 'refresh', 'me'] as const) {
    const mine = recs.filter((r) => r.kind === kind)
    const by = new Map<string, number>()
    for (const r of mine) {
      const key =
        r.status !== null ? String(r.status) : r.proxyStatus ? `proxy ${r.proxyStatus}` : `error ${r.error}`
      by.set(key, (by.get(key) ?? 0) + 1)
    }
    const ms = mine.filter((r) => r.status !== null).map((r) => r.ms)
    const statuses = [...by.entries()].map(([k, n]) => `${k}: ${n}`).join(', ')
    out.push(
      `  ${kind.padEnd(8)} ${String(mine.length).padStart(6)} sent  ${fmt(mine.length / seconds)}/s  p50 ${fmt(percentile(ms, 50))} ms  p99 ${fmt(percentile(ms, 99))} ms  [${statuses}]`,
    )
  }
  const all = answered.map((r) => r.ms)
  out.push(
    `  all      ${(answered.length / seconds).toFixed(0)} answered/s  p50 ${percentile(all, 50).toFixed(1)} ms  p99 ${percentile(all, 99).toFixed(1)} ms`,
  )
  const servers = new Map<string, number>()
  for (const r of answered) servers.set(r.server ?? '?', (servers.get(r.server ?? '?') ?? 0) + 1)
  out.push(
    `  answered per instance (X-Served-By): ${[...servers.entries()]
      .sort()
      .map(([s, n]) => `${s} ${n}`)
      .join(', ')}`,
  )
  return out
}
