// Retention on 10M rows, two ways (`make bench-scale`, after the workloads), on a scratch copy of the seeded
// database (CREATE DATABASE ... TEMPLATE), so the seeded one stays whole for the next run:
//  (a) the service's own sweep (src/modules/system/retention.ts: bounded batches of 5,000 by the created_at
//      index) with 30-day retention, audit rows and usage rows timed apart, with the latency of logins
//      made against a server on the copy during the sweep beside those made just before it;
//  (b) monthly range partitions: audit_part, a partitioned copy of audit_log with its indexes, then the
//      months entirely older than 30 days detached and dropped, each timed.
// Partitions are measured only: the production schema stays one table (the choice this records).
import { openPostgres } from '../src/db/connect.js'
import { sweepOnce, type SweepContext } from '../src/modules/system/retention.js'
import pg from 'pg'

const RETENTION_DAYS = 30
const BASELINE_MS = 5000

interface RetentionDeps {
  admin: (sql: string) => Promise<void>
  /** Registers what undoes a step however the run ends (a crash, Ctrl-C); returns it, to run it now. */
  onExit: (undo: () => Promise<void>) => () => Promise<void>
  urlOf: (name: string) => string
  startServer: (url: string, port: number) => Promise<{ base: string; stop: () => Promise<void> }>
  login: (base: string, tenantCode: string, email: string) => Promise<unknown>
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN
}

/**
 * Logs in over and over on 2 connections until `stop` says so; the latency of each, in ms. The first
 * failure stops both connections and rejects.
 */
async function loginLoop(deps: RetentionDeps, base: string, stop: () => boolean): Promise<number[]> {
  const out: number[] = []
  let failed = false
  const loop = async (i: number) => {
    while (!stop() && !failed) {
      const t = performance.now()
      await deps.login(base, 'bench', `bench${i}@example.test`).catch((err: unknown) => {
        failed = true
        throw err
      })
      out.push(performance.now() - t)
    }
  }
  await Promise.all([loop(1), loop(2)])
  return out
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now()
  const out = await fn()
  return [out, performance.now() - started]
}

/** (b): audit_part partitioned by month, filled from audit_log; the old months detached and dropped. */
async function partitions(c: pg.Client): Promise<void> {
  const { rows: months } = await c.query<{ m: Date }>(
    `select generate_series(date_trunc('month', min(created_at)), date_trunc('month', max(created_at)),
       interval '1 month') as m from tessera_audit.audit_log`,
  )
  const [, createMs] = await timed(async () => {
    await c.query(
      'create table audit_part (like tessera_audit.audit_log including defaults) partition by range (created_at)',
    )
    for (const { m } of months) {
      const name = `audit_part_${m.toISOString().slice(0, 7).replace('-', '_')}`
      const from = m.toISOString()
      await c.query(`create table ${name} partition of audit_part
        for values from ('${from}') to ('${from}'::timestamptz + interval '1 month')`)
    }
    await c.query('insert into audit_part select * from tessera_audit.audit_log')
    // The indexes audit_log has (not the primary key: a unique index must hold the partition key).
    await c.query(`create index on audit_part (tenant_id, created_at desc);
      create index on audit_part (tenant_id, action, created_at desc);
      create index on audit_part (tenant_id, ip_address, created_at desc);
      create index on audit_part (created_at)`)
  })
  console.log(
    `  (b) audit_part: ${months.length} monthly partitions filled from audit_log with 4 indexes in ${secs(createMs)}`,
  )
  const { rows: old } = await c.query<{ name: string; n: string; hi: string }>(
    `select c.relname as name, c.reltuples::bigint as n, pg_get_expr(c.relpartbound, c.oid) as hi
     from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where i.inhparent = 'audit_part'::regclass order by c.relname`,
  )
  const cutoff = new Date(Date.now() - RETENTION_DAYS * 86_400_000)
  let removed = 0
  let total = 0
  for (const p of old) {
    const to = /TO \('([^']+)'\)/.exec(p.hi)?.[1]
    if (!to || new Date(to) > cutoff) continue
    const { rows } = await c.query<{ n: string }>(`select count(*) as n from ${p.name}`)
    const [, detachMs] = await timed(() => c.query(`alter table audit_part detach partition ${p.name}`))
    const [, dropMs] = await timed(() => c.query(`drop table ${p.name}`))
    removed += Number(rows[0]?.n ?? 0)
    total += detachMs + dropMs
    console.log(
      `      ${p.name}: ${Number(rows[0]?.n).toLocaleString()} rows, detach ${detachMs.toFixed(0)} ms, drop table ${dropMs.toFixed(0)} ms`,
    )
  }
  console.log(
    `  (b) partitions: ${removed.toLocaleString()} rows gone in ${total.toFixed(0)} ms (whole months only: rows of the month the cutoff falls in stay until that month is wholly past it)`,
  )
}

/** Both measurements on a scratch copy of the seeded database, which is dropped afterwards. */
export async function measureRetention(seededUrl: string, tag: string, deps: RetentionDeps): Promise<void> {
  console.log(`\n## Retention on the seeded tables, ${RETENTION_DAYS}-day cutoff (on a scratch copy)\n`)
  const copy = `tessera_scale_retention_${tag}`
  const seededName = new URL(seededUrl).pathname.slice(1)
  const dropCopy = deps.onExit(() => deps.admin(`drop database if exists ${copy} with (force)`))
  const [, copyMs] = await timed(() =>
    deps.admin(`create database ${copy} template ${seededName} strategy file_copy`),
  )
  console.log(`  scratch copy made in ${secs(copyMs)}`)
  const copyUrl = deps.urlOf(copy)
  const c = new pg.Client({ connectionString: copyUrl })
  await c.connect()
  const opened = openPostgres(copyUrl, { poolMax: 2 })
  let server: Awaited<ReturnType<RetentionDeps['startServer']>> | undefined
  try {
    await partitions(c)
    const { rows: before } = await c.query<{ a: string; u: string; routed: string }>(
      `select (select count(*) from tessera_audit.audit_log) as a, (select count(*) from client_key_usage) as u,
        (select count(*) from tenant_databases) as routed`,
    )
    // Why no routed databases in the stand-in: the seed routes no tenant (checked here, not assumed).
    if (Number(before[0]?.routed) !== 0)
      throw new Error('the seeded database routes tenants; the bench does not')
    server = await deps.startServer(copyUrl, 3937)
    const base = server.base
    const started = performance.now()
    const baseline = await loginLoop(deps, base, () => performance.now() - started > BASELINE_MS)
    // What sweepOnce reads, typed: the copy as the main database, the wall clock, the two retention settings.
    const ctx = (auditDays: number | undefined, usageDays: number): SweepContext => ({
      dbs: { main: opened.db, routedGroups: () => [] },
      clock: { now: () => Date.now() },
      config: { auditRetentionDays: auditDays, usageRetentionDays: usageDays },
    })
    let sweeping = true
    // Settled at once, so a failed login is reported here, after the sweep, and never left unhandled.
    const during = loginLoop(deps, base, () => !sweeping).then(
      (lat) => ({ lat }),
      (err: unknown) => ({ err }),
    )
    // The logins stop, and are waited for, before the first error goes on: the sweep's if it failed, else a
    // login's. (The server stops after this; a login loop still running then would fail on its own.)
    const swept = await (async () => {
      const audit = await timed(() => sweepOnce(ctx(RETENTION_DAYS, 36_500)))
      const usage = await timed(() => sweepOnce(ctx(undefined, RETENTION_DAYS)))
      return { audit, usage }
    })().finally(async () => {
      sweeping = false
      await during
    })
    const logins = await during
    if ('err' in logins) throw logins.err
    const lat = logins.lat
    const [auditCounts, auditMs] = swept.audit
    const [usageCounts, usageMs] = swept.usage
    const rate = (n: number, ms: number) => `${Math.round(n / (ms / 1000)).toLocaleString()} rows/s`
    console.log(
      `  (a) batched sweep: audit_log ${Number(before[0]?.a).toLocaleString()} rows, ${auditCounts?.audit.toLocaleString()} deleted in ${secs(auditMs)} (${rate(auditCounts?.audit ?? 0, auditMs)})`,
    )
    console.log(
      `  (a) batched sweep: client_key_usage ${Number(before[0]?.u).toLocaleString()} rows, ${usageCounts?.usage.toLocaleString()} deleted in ${secs(usageMs)} (${rate(usageCounts?.usage ?? 0, usageMs)})`,
    )
    console.log(
      `  logins on 2 connections: before the sweep p50 ${pct(baseline, 50).toFixed(0)} ms p99 ${pct(baseline, 99).toFixed(0)} ms (${baseline.length}); during it p50 ${pct(lat, 50).toFixed(0)} ms p99 ${pct(lat, 99).toFixed(0)} ms (${lat.length})`,
    )
  } finally {
    await server?.stop()
    await opened.close()
    await c.end()
    await dropCopy()
  }
}
