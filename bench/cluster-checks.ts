// The checks of `make cluster-demo` (bench/cluster-demo.ts): what the client saw against what the
// database holds once every instance has stopped.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { expected, type Rec } from './cluster-load.js'

/** A request HAProxy sent more than once (its log, `retries` above 0), by request id. */
export interface HaproxyRetry {
  id: string
  server: string
  status: string
  redispatched: boolean
}

/** The requests HAProxy retried or redispatched, from its log (request id, retries, final server). */
export function haproxyRetries(file: string): HaproxyRetry[] {
  const out: HaproxyRetry[] = []
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /req=(\S+) srv=(\S+) status=(\S+) retries=(\+?)(\d+) term=(\S+)/.exec(line)
    if (m && Number(m[5]) > 0)
      out.push({ id: m[1] ?? '', server: m[2] ?? '', status: m[3] ?? '', redispatched: m[4] === '+' })
  }
  return out
}

/** The error and fatal lines of the instances' logs (pino JSON, level 50 and up), summed by message. */
export function serviceErrors(files: string[]): string[] {
  const counts = new Map<string, number>()
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!/"level":(5|6)0/.test(line)) continue
      const { msg, err } = JSON.parse(line) as { msg?: string; err?: { message?: string } }
      const key = `${msg ?? ''}${err?.message ? `: ${err.message}` : ''}`.slice(0, 160)
      counts.set(key, (counts.get(key) ?? 0) + 1)
    }
  }
  const total = [...counts.values()].reduce((a, b) => a + b, 0)
  return [
    `\nInstances' logs: ${total} error lines`,
    ...[...counts.entries()].slice(0, 6).map(([k, n]) => `  ${n} x ${k}`),
  ]
}

const sha256 = (v: string) => createHash('sha256').update(v).digest('hex')
const ACTION = { login: 'LOGIN', refresh: 'REFRESH_TOKEN' } as const

interface Check {
  name: string
  pass: boolean
  detail: string
}

/** Runs every check; `lines` is the printed report, `pass` false when any check failed. */
export async function checkAll(o: {
  dbUrl: string
  tenantId: string
  load: { recs: Rec[]; held: string[] }
  retries: HaproxyRetry[]
}): Promise<{ pass: boolean; lines: string[] }> {
  const db = new pg.Client({ connectionString: o.dbUrl })
  await db.connect()
  try {
    const checks: Check[] = []
    const add = (name: string, pass: boolean, detail: string) => checks.push({ name, pass, detail })
    const retried = new Map(o.retries.map((r) => [r.id, r]))
    const refreshes = o.load.recs.filter((r) => r.kind === 'refresh')

    // 1. One winner per refresh token, as the client saw it, and in each deliberate race.
    const byToken = new Map<string, Rec[]>()
    for (const r of refreshes) byToken.set(r.token ?? '', [...(byToken.get(r.token ?? '') ?? []), r])
    const twice = [...byToken.values()].filter((rs) => rs.filter((r) => r.status === 200).length > 1)
    add(
      'at most one 200 per refresh token presented',
      twice.length === 0,
      `${byToken.size} tokens presented, ${twice.length} answered 200 more than once`,
    )
    const races = new Map<number, Rec[]>()
    for (const r of refreshes) if (r.race !== undefined) races.set(r.race, [...(races.get(r.race) ?? []), r])
    const answeredPairs = [...races.values()].filter((p) => p.every((r) => r.status !== null))
    const oneWinner = answeredPairs.filter(
      (p) => p.filter((r) => r.status === 200).length === 1 && p.filter((r) => r.status === 401).length === 1,
    )
    add(
      'each race of two refreshes of one token: exactly one 200, one 401',
      oneWinner.length === answeredPairs.length,
      `${races.size} races, ${answeredPairs.length} with both answered, ${oneWinner.length} with one winner`,
    )

    // 2. The families in the database: no fork, never two live tokens, every token the client holds live.
    const { rows: fams } = await db.query<{ total: number; live: number; rotated: number; reason: string }>(
      `select count(t.id)::int as total, count(t.id) filter (where t.revoked_at is null)::int as live,
         count(t.id) filter (where t.rotated_at is not null)::int as rotated, s.revoked_reason as reason
       from sessions s join refresh_tokens t on t.session_id = s.id
       where s.tenant_id = $1 group by s.id, s.revoked_reason`,
      [o.tenantId],
    )
    const twoLive = fams.filter((f) => f.live > 1).length
    const forked = fams.filter((f) => f.total !== f.rotated + 1).length
    const reuse = fams.filter((f) => f.reason === 'refresh_token_reuse').length
    const rotated = fams.reduce((n, f) => n + f.rotated, 0)
    add(
      'no refresh family with two live tokens, none forked',
      twoLive === 0 && forked === 0,
      `${fams.length} families, ${rotated} rotations; ${twoLive} with two live tokens, ${forked} forked`,
    )
    add(
      'no family revoked by reuse detection (no rotated token was presented after the grace)',
      reuse === 0,
      `${reuse} revoked for refresh_token_reuse`,
    )
    const { rows: held } = await db.query<{ ok: boolean }>(
      `select t.revoked_at is null and s.revoked_at is null as ok from refresh_tokens t
       join sessions s on s.id = t.session_id where t.tenant_id = $1 and t.token_hash = any($2)`,
      [o.tenantId, o.load.held.map(sha256)],
    )
    const liveHeld = held.filter((h) => h.ok).length
    add(
      'every token the client holds is its family’s live token',
      liveHeld === o.load.held.length,
      `${o.load.held.length} held, ${liveHeld} live in the database`,
    )

    // 3. Audit rows, matched to requests by X-Request-Id.
    const { rows: audit } = await db.query<{ request_id: string | null; action: string; success: boolean }>(
      `select request_id, action, success from tessera_audit.audit_log where tenant_id = $1 and action in ('LOGIN', 'REFRESH_TOKEN')`,
      [o.tenantId],
    )
    const rowsOf = new Map<string, { action: string; success: boolean }[]>()
    for (const a of audit) rowsOf.set(a.request_id ?? '', [...(rowsOf.get(a.request_id ?? '') ?? []), a])
    const sent = new Set(o.load.recs.map((r) => r.id))
    const stray = audit.filter((a) => !sent.has(a.request_id ?? '')).length
    const refreshOk = audit.filter((a) => a.action === 'REFRESH_TOKEN' && a.success).length
    add(
      'successful REFRESH_TOKEN rows = rotated tokens (written by one statement)',
      refreshOk === rotated,
      `${refreshOk} rows, ${rotated} rotated tokens`,
    )
    let mismatched = 0
    const replays: { id: string; kind: string; first: string; status: number }[] = []
    const unanswered = { withRow: 0, without: 0 }
    const table = new Map<string, { db: number; answered: number; other: number }>()
    const tally = (key: string, field: 'db' | 'answered' | 'other', n = 1) => {
      const t = table.get(key) ?? { db: 0, answered: 0, other: 0 }
      t[field] += n
      table.set(key, t)
    }
    for (const a of audit) tally(`${a.action} ${a.success ? 'success' : 'failure'}`, 'db')
    for (const r of o.load.recs) {
      if (r.kind === 'me') continue
      const action = ACTION[r.kind]
      const rows = rowsOf.get(r.id) ?? []
      const key = (s: boolean) => `${action} ${s ? 'success' : 'failure'}`
      if (r.status === 200 || r.status === 401) {
        const success = r.status === 200
        const own = rows.findIndex((x) => x.action === action && x.success === success)
        const extra = rows.filter((_, i) => i !== own)
        // A request HAProxy replayed after an instance died may have left a row of its lost first attempt.
        const explained = extra.length === 0 || (extra.length === 1 && retried.has(r.id))
        if (own < 0 || !explained) mismatched++
        tally(key(success), 'answered')
        for (const x of extra) tally(key(x.success), 'other')
        for (const x of extra)
          replays.push({ id: r.id, kind: r.kind, first: x.success ? 'success' : 'failure', status: r.status })
      } else if (r.status === null) {
        if (rows.length > 1) mismatched++
        unanswered[rows.length ? 'withRow' : 'without']++
        for (const x of rows) tally(key(x.success), 'other')
      } else if (rows.length > 0) {
        mismatched++ // a 503 while shutting down (or a 429) never reaches the handler, so writes no row
      }
    }
    add(
      'one audit row per answered login/refresh with its outcome; none for other answers; no stray rows',
      mismatched === 0 && stray === 0,
      `${mismatched} requests whose rows do not match, ${stray} rows no request of the client explains`,
    )
    const answeredOther = o.load.recs.filter(
      (r) => r.kind !== 'me' && r.status !== null && r.status !== 200 && r.status !== 401,
    ).length
    const unexpected = o.load.recs.filter((r) => r.status !== null && !expected(r))
    const unexplained = unexpected.filter((r) => !retried.has(r.id))
    add(
      'every answer is the expected one, or follows a HAProxy replay of that request',
      unexplained.length === 0,
      `${unexpected.length} unexpected answers${unexpected
        .slice(0, 5)
        .map((r) => ` (${r.id}: ${r.kind} ${r.status})`)
        .join('')}, ${unexplained.length} without a HAProxy retry`,
    )

    const lines = ['\nAudit rows (LOGIN, REFRESH_TOKEN) against the answers the client got:']
    for (const [k, t] of [...table.entries()].sort())
      lines.push(
        `  ${k.padEnd(24)} rows ${String(t.db).padStart(6)} = answered ${String(t.answered).padStart(6)} + of unanswered or replayed requests ${t.other}${t.db === t.answered + t.other ? '' : '  (does not add up)'}`,
      )
    lines.push(
      `  unanswered logins/refreshes: ${unanswered.withRow + unanswered.without} (${unanswered.withRow} left a row, ${unanswered.without} none); answered with another status: ${answeredOther}`,
    )
    const finals = new Map<string, number>()
    for (const r of o.retries) finals.set(r.status, (finals.get(r.status) ?? 0) + 1)
    lines.push(
      `  HAProxy retried ${o.retries.length} requests (${o.retries.filter((r) => r.redispatched).length} redispatched), final answers ${[
        ...finals.entries(),
      ]
        .map(([k, n]) => `${k}: ${n}`)
        .join(', ')}`,
    )
    lines.push(`  replayed requests whose lost first attempt wrote a row: ${replays.length}`)
    for (const r of replays.slice(0, 5))
      lines.push(`    ${r.id} ${r.kind}: first attempt's row ${r.first}, answer after the replay ${r.status}`)
    lines.push('\nChecks:')
    for (const c of checks) lines.push(`  ${c.pass ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail}`)
    const pass = checks.every((c) => c.pass)
    lines.push(`\n${pass ? 'PASS' : 'FAIL'}: ${checks.filter((c) => c.pass).length}/${checks.length} checks`)
    return { pass, lines }
  } finally {
    await db.end()
  }
}
