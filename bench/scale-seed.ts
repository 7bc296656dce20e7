// The 10-million-row database of `make bench-scale` (bench/scale.ts), written server-side with
// `insert ... select generate_series(...)`, never through the API. Tenants go through provisionTenant
// (what the service needs of a tenant: its row and built-in roles); every other row is bulk SQL shaped like
// what the service writes. The distribution (SCALE_FRACTION scales every count, for trying the code):
//
//   tenant `bench` (the worst case): 100k users, 100k sessions, 1M audit rows, 1,000 Client Keys with
//     1M usage rows, 100k of them on its busiest key (the key whose stats the bench reads)
//   the other 999 tenants (`typical` is the first): ~900 users, ~900 sessions, ~9,000 audit rows,
//     ~99 Client Keys with ~91 usage rows each
//
// Ids are md5-derived from the row number (users `u<g>`, keys `k<k>`), so audit and usage rows name their
// user or key without a join. Every user shares one bcrypt cost-12 hash of the bench password.
import { createHash } from 'node:crypto'
import type { Kysely } from 'kysely'
import pg from 'pg'
import { openPostgres } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import type { Database } from '../src/db/database.js'
import { provisionTenant } from '../src/modules/tenants/provision.js'

const FRACTION = Number(process.env.SCALE_FRACTION ?? 1)
const n = (count: number) => Math.max(1, Math.round(count * FRACTION))
const SEED = {
  tenants: 1000,
  users: n(1_000_000),
  bigUsers: n(100_000),
  audit: n(10_000_000),
  bigAudit: n(1_000_000),
  keys: n(100_000),
  bigKeys: n(1_000),
  usage: n(10_000_000),
  bigUsage: n(1_000_000),
  hotKeyUsage: n(100_000),
}
/** Where the bench tenants' login users live; `bench<i>@example.test` like bench/auth.ts. */
export const BENCH_LOGINS = 10
/** Raised budgets: the bench measures throughput, not the per-IP limits (tested elsewhere). */
const BENCH_AUTH_CONFIG = {
  rateLimits: { requestsPerMinute: 10_000_000, loginPerMinute: 10_000_000 },
  maxConcurrentSessions: 1000,
}
/** The tables the seed fills, in the order it fills them. */
const SEEDED_TABLES = [
  'tenants',
  'roles',
  'users',
  'user_roles',
  'sessions',
  'refresh_tokens',
  'audit_log',
  'client_keys',
  'client_key_usage',
]

const uuidOf = (s: string) => {
  const h = createHash('md5').update(s).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}
/** The ids the seed gives: user `g` and Client Key `k` (the same md5 the SQL computes). */
export const userId = (g: number) => uuidOf(`u${g}`)
export const keyId = (k: number) => uuidOf(`k${k}`)
/** The first user of tenant number `t` (1..999); tenant 0 (`bench`) holds users 0..bigUsers-1. */
export const firstUserOf = (t: number) => SEED.bigUsers + t - 1
/** The first Client Key of tenant number `t` (1..999). */
export const firstKeyOf = (t: number) => SEED.bigKeys + t - 1

/** Rows per tenant number for a table of `total` rows, `big` of them in tenant 0: `t(i)` in SQL. */
const tenantOf = (i: string, big: number) =>
  `case when ${i} < ${big} then 0 else 1 + (${i} - ${big}) % ${SEED.tenants - 1} end`
const others = SEED.tenants - 1

const SQL_USERS = (from: number, to: number) => `
  insert into users (id, tenant_id, email, password_hash, status, email_verified, created_at, updated_at)
  select md5('u' || g)::uuid, st.id,
    case when g < ${BENCH_LOGINS} then 'bench' || g || '@example.test'
      when g = ${BENCH_LOGINS} or (g >= ${SEED.bigUsers} and g < ${SEED.bigUsers + others}) then 'admin@example.test'
      else 'user' || g || '@example.test' end,
    $1, case when g % 50 = 49 then 'INACTIVE' else 'ACTIVE' end, g % 3 <> 0,
    now() - random() * interval '365 days', now()
  from generate_series(${from}::bigint, ${to - 1}) g join seed_tenants st on st.n = ${tenantOf('g', SEED.bigUsers)}`

// One session per user, active (created in the last week, ending in 30 days), with one live refresh token.
const SQL_SESSIONS = `
  insert into sessions (id, tenant_id, user_id, created_at, last_used_at, expires_at, ip, user_agent)
  select md5('s' || g)::uuid, u.tenant_id, u.id, c, c, now() + interval '30 days',
    '10.' || (g % 200) || '.' || (g / 200 % 250) || '.' || (g % 7), 'Mozilla/5.0 (seed)'
  from (select g, now() - random() * interval '7 days' as c from generate_series(0, ${SEED.users - 1}) g) s
  join users u on u.id = md5('u' || g)::uuid`
const SQL_REFRESH = `
  insert into refresh_tokens (tenant_id, session_id, token_hash, created_at, expires_at)
  select tenant_id, id, encode(sha256(convert_to('rt' || id::text, 'UTF8')), 'hex'), created_at, expires_at
  from sessions`

// The mix: 40% logins (15% failing), 45% refreshes (2% failing), 8% logouts, the rest account and
// role changes. Failures come from a small pool of addresses (what the security metrics look for).
const SQL_AUDIT = (from: number, to: number) => `
  insert into tessera_audit.audit_log (tenant_id, user_id, action, success, error_message, ip_address, user_agent,
    actor_type, actor_id, metadata, request_id, created_at)
  select st.id, u, a, ok,
    case when ok then null when a = 'LOGIN' then 'INVALID_CREDENTIALS' else 'INVALID_REFRESH_TOKEN' end,
    case when ok then '10.' || (i % 200) || '.' || (i / 200 % 250) || '.' || (i % 7)
      else '203.0.113.' || (i % 97) end,
    'Mozilla/5.0 (seed)', 'user', u, '{}'::jsonb, md5('r' || i), c
  from (
    select i, t, c,
      md5('u' || case when t = 0 then (i * 7919) % ${SEED.bigUsers}
        else ${SEED.bigUsers} + t - 1 + ${others} * ((i * 7919) % ${Math.floor((SEED.users - SEED.bigUsers) / others) - 1}) end)::uuid as u,
      case when r < 0.40 then 'LOGIN' when r < 0.85 then 'REFRESH_TOKEN' when r < 0.93 then 'LOGOUT'
        when r < 0.95 then 'PASSWORD_CHANGED' when r < 0.96 then 'REGISTER' when r < 0.97 then 'ROLE_ASSIGN'
        when r < 0.98 then 'SESSIONS_REVOKED' when r < 0.99 then 'ACCOUNT_LOCKED' else 'OTP_ENABLED' end as a,
      case when r < 0.40 then r2 >= 0.15 when r < 0.85 then r2 >= 0.02 else true end as ok
    from (
      select i, ${tenantOf('i', SEED.bigAudit)} as t, random() as r, random() as r2,
        now() - random() * interval '90 days' as c
      from generate_series(${from}::bigint, ${to - 1}) i) x) y
  join seed_tenants st on st.n = y.t`

const SQL_KEYS = `
  insert into client_keys (id, tenant_id, name, prefix, key_hash, scopes, status, created_by_type,
    created_at, updated_at, last_used_at)
  select md5('k' || k)::uuid, st.id, 'key-' || k, 'ck_' || substr(md5('p' || k), 1, 9),
    encode(sha256(convert_to('ck' || k, 'UTF8')), 'hex'), '["users:read","auth:logs"]', 'ACTIVE', 'user',
    now() - interval '100 days', now(), now()
  from generate_series(0, ${SEED.keys - 1}) k join seed_tenants st on st.n = ${tenantOf('k', SEED.bigKeys)}`

const ROUTES = `(array['/api/v1/users', '/api/v1/users/:userId', '/api/v1/roles', '/api/v1/permissions/check',
  '/api/v1/auth-logs', '/api/v1/tenants/me/metrics', '/api/v1/roles/assign', '/api/v1/permissions'])`
// Tenant 0's first hotKeyUsage rows go to its key 0; the rest of its rows cycle over its keys; the other
// tenants' rows cycle over their keys.
const SQL_USAGE = (from: number, to: number) => `
  insert into client_key_usage (tenant_id, key_id, method, route, status_code, ip, user_agent, request_id,
    created_at)
  select st.id, md5('k' || k)::uuid, case when i % 4 = 0 then 'POST' else 'GET' end,
    ${ROUTES}[1 + (i * 31) % 8],
    case when r < 0.90 then 200 when r < 0.94 then 404 when r < 0.97 then 403 when r < 0.995 then 429 else 500 end,
    '10.' || (i % 200) || '.' || (i / 200 % 250) || '.1', 'seed-client/1.0', md5('q' || i),
    now() - random() * interval '90 days'
  from (
    select i, random() as r,
      case when i < ${SEED.hotKeyUsage} then 0 when i < ${SEED.bigUsage} then i % ${SEED.bigKeys}
        else ${SEED.bigKeys} + (i - ${SEED.bigUsage}) % ${SEED.keys - SEED.bigKeys} end as k
    from generate_series(${from}::bigint, ${to - 1}) i) x
  join seed_tenants st on st.n = ${tenantOf('k', SEED.bigKeys)}`

/** `fn` with the table's indexes dropped (except those a foreign key needs), then rebuilt as they were. */
async function withoutIndexes(c: pg.Client, table: string, fn: () => Promise<void>): Promise<number> {
  const { rows } = await c.query<{ name: string; def: string; con: string | null; cdef: string | null }>(
    `select format('%I.%I', n.nspname, i.relname) as name, pg_get_indexdef(i.oid) as def, con.conname as con,
       pg_get_constraintdef(con.oid) as cdef
     from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
     join pg_namespace n on n.oid = i.relnamespace
     left join pg_constraint con on con.conindid = i.oid and con.contype in ('p', 'u')
     where t.oid = $1::regclass
       and (con.oid is null or not exists (select 1 from pg_constraint f where f.confrelid = t.oid and f.contype = 'f'))`,
    [table],
  )
  for (const r of rows) {
    await c.query(r.con ? `alter table ${table} drop constraint ${r.con}` : `drop index ${r.name}`)
  }
  await fn()
  const started = performance.now()
  for (const r of rows) {
    await c.query(r.con ? `alter table ${table} add constraint ${r.con} ${r.cdef}` : r.def)
  }
  return performance.now() - started
}

/** Runs `sql` in chunks of `chunk` rows over [0, total), so progress shows. */
async function chunked(
  c: pg.Client,
  total: number,
  chunk: number,
  sql: (from: number, to: number) => string,
  params: unknown[] = [],
): Promise<void> {
  for (let from = 0; from < total; from += chunk) {
    await c.query(sql(from, Math.min(total, from + chunk)), params)
  }
}

/**
 * Seeds an empty, migrated database: 1,000 provisioned tenants (`bench` is number 0, `typical` 1) and the
 * rows above; then VACUUM ANALYZE. Logs each step's time and the table sizes.
 */
export async function seedScale(
  db: Kysely<Database>,
  url: string,
  passwordHash: string,
  log: (line: string) => void,
): Promise<void> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  const step = async (name: string, fn: () => Promise<unknown>) => {
    const started = performance.now()
    const extra = await fn()
    const s = (performance.now() - started) / 1000
    log(`  ${name.padEnd(44)} ${s.toFixed(1).padStart(6)} s${typeof extra === 'string' ? `  ${extra}` : ''}`)
  }
  const started = performance.now()
  try {
    // Why: a bench database, thrown away on failure; a WAL flush per statement buys nothing here, and the
    // rows are consistent by construction, so the foreign-key triggers (replica role) are skipped.
    await c.query(`set synchronous_commit = off; set maintenance_work_mem = '1GB';
      set session_replication_role = replica`)
    await step(`${SEED.tenants} tenants (provisionTenant each)`, async () => {
      const codes = ['bench', 'typical']
      for (let t = 2; t < SEED.tenants; t++) codes.push(`t${String(t).padStart(4, '0')}`)
      // Four at a time: each is its own short transaction.
      for (let t = 0; t < codes.length; t += 4) {
        await Promise.all(
          codes.slice(t, t + 4).map((code, j) =>
            provisionTenant(db, {
              code,
              name: `Tenant ${t + j}`,
              authConfig: t + j < 2 ? BENCH_AUTH_CONFIG : undefined,
            }),
          ),
        )
      }
      await c.query(`create table seed_tenants as
        select (row_number() over (order by code = 'bench' desc, code = 'typical' desc, code) - 1)::int as n, id
        from tenants; alter table seed_tenants add primary key (n)`)
    })
    await step(`${SEED.users.toLocaleString()} users (one shared bcrypt hash)`, () =>
      withoutIndexes(c, 'users', () =>
        chunked(c, SEED.users, 250_000, SQL_USERS, [passwordHash]).then(async () => {
          // The admins (user bigUsers..: the first user of each other tenant) hold the built-in admin role.
          await c.query(
            `insert into user_roles (tenant_id, user_id, role_id)
             select u.tenant_id, u.id, r.id from users u join roles r on r.tenant_id = u.tenant_id and r.name = 'admin'
             where u.email = 'admin@example.test'`,
          )
        }),
      ).then((ms) => `(indexes rebuilt in ${(ms / 1000).toFixed(1)} s)`),
    )
    await step(`${SEED.users.toLocaleString()} sessions and refresh tokens`, async () => {
      const s = await withoutIndexes(c, 'sessions', () => c.query(SQL_SESSIONS).then(() => undefined))
      const r = await withoutIndexes(c, 'refresh_tokens', () => c.query(SQL_REFRESH).then(() => undefined))
      return `(indexes rebuilt in ${((s + r) / 1000).toFixed(1)} s)`
    })
    await step(`${SEED.audit.toLocaleString()} audit rows over 90 days`, async () => {
      const ms = await withoutIndexes(c, 'tessera_audit.audit_log', () =>
        chunked(c, SEED.audit, 1_000_000, SQL_AUDIT),
      )
      return `(indexes rebuilt in ${(ms / 1000).toFixed(1)} s)`
    })
    await step(`${SEED.keys.toLocaleString()} Client Keys`, () => c.query(SQL_KEYS))
    await step(`${SEED.usage.toLocaleString()} Client Key usage rows over 90 days`, async () => {
      const ms = await withoutIndexes(c, 'client_key_usage', () =>
        chunked(c, SEED.usage, 1_000_000, SQL_USAGE),
      )
      return `(indexes rebuilt in ${(ms / 1000).toFixed(1)} s)`
    })
    await step('drop seed_tenants, VACUUM ANALYZE', async () => {
      await c.query('drop table seed_tenants')
      await c.query('vacuum analyze')
    })
    log(
      `  ${'seeding in total'.padEnd(44)} ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s`,
    )
    const { rows } = await c.query<{ t: string; rows: string; size: string }>(
      `select c.relname as t, c.reltuples::bigint as rows, pg_size_pretty(pg_total_relation_size(c.oid)) as size
       from pg_class c where c.relname = any($1) order by pg_total_relation_size(c.oid) desc`,
      [SEEDED_TABLES],
    )
    log('\n  table               rows (estimate)   total size (with indexes)')
    for (const r of rows)
      log(`  ${r.t.padEnd(20)} ${Number(r.rows).toLocaleString().padStart(15)}   ${r.size}`)
  } finally {
    await c.end()
  }
}

/** The empty database: the two bench tenants with their login users, admins and measured keys only. */
export async function seedEmpty(url: string, hash: string): Promise<void> {
  const opened = openPostgres(url, { poolMax: 2 })
  try {
    await migrateToLatest(opened.db)
    const tenants = [
      { code: 'bench', admin: userId(BENCH_LOGINS), key: keyId(0) },
      { code: 'typical', admin: userId(firstUserOf(1)), key: keyId(firstKeyOf(1)) },
    ]
    for (const t of tenants) {
      const { tenant } = await provisionTenant(opened.db, {
        code: t.code,
        name: t.code,
        authConfig: BENCH_AUTH_CONFIG,
      })
      const emails =
        t.code === 'bench' ? Array.from({ length: BENCH_LOGINS }, (_, i) => `bench${i}@example.test`) : []
      for (const email of emails)
        await opened.db
          .insertInto('users')
          .values({ tenant_id: tenant.id, email, password_hash: hash })
          .execute()
      await opened.db
        .insertInto('users')
        .values({ id: t.admin, tenant_id: tenant.id, email: 'admin@example.test', password_hash: hash })
        .execute()
      const role = await opened.db
        .selectFrom('roles')
        .select('id')
        .where('tenant_id', '=', tenant.id)
        .where('name', '=', 'admin')
        .executeTakeFirstOrThrow()
      await opened.db
        .insertInto('user_roles')
        .values({ tenant_id: tenant.id, user_id: t.admin, role_id: role.id })
        .execute()
      await opened.db
        .insertInto('client_keys')
        .values({
          id: t.key,
          tenant_id: tenant.id,
          name: 'key',
          prefix: 'ck_empty0000',
          key_hash: 'e'.repeat(63) + t.code.length,
        })
        .execute()
    }
  } finally {
    await opened.close()
  }
}
