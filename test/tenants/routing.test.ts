import { randomUUID } from 'node:crypto'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { sql, type Kysely } from 'kysely'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import type { Database } from '../../src/db/database.js'
import { buildTestApp, PLATFORM_KEY, type TestLike } from '../helpers/app.js'
import { installContractGuard } from '../helpers/contract-guard.js'
import { createTestDatabaseUrl, openTestDatabase, type TapTest } from '../helpers/db.js'
import {
  createKey,
  createTenant,
  createUser,
  platformKey,
  platformTenant,
  type TenantFx,
  type UserFx,
  userWithToken,
} from '../helpers/fixtures.js'
import { call, login, refresh, unchecked } from '../helpers/call.js'

const HAS_PG = !!process.env.TEST_DATABASE_URL
const NO_PG = HAS_PG ? false : 'TEST_DATABASE_URL is not set: routing needs a PostgreSQL server'
/** The test server is local: allow its host, which the loopback refusal would otherwise refuse. */
const ALLOW_TEST_SERVER = { DATABASE_ROUTING_ALLOWED_HOSTS: '127.0.0.1' }

/** A test database URL with a password (routed URLs must carry one; the test server trusts any). */
function withPassword(url: string, password = 'routing-pw'): string {
  const u = new URL(url)
  u.password = password
  return u.toString()
}
const TABLES = [
  ['users', 'id'],
  ['roles', 'id'],
  ['permissions', 'id'],
  ['role_permissions', "role_id || '/' || permission_id"],
  ['user_roles', "user_id || '/' || role_id"],
  ['user_permissions', "user_id || '/' || permission_id"],
  ['sessions', 'id'],
  ['refresh_tokens', 'id'],
  ['tessera_audit.audit_log', 'id'],
] as const
const AUDIT = 'tessera_audit.audit_log'

/** Every row key of the tenant per tenant-scoped table (built-in permission ids as names: they differ). */
async function snapshot(db: Kysely<Database>, tenantId: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {}
  for (const [table, key] of TABLES) {
    // Why the routing's own rows are left out: each call of setTenantDatabase writes one (contract section
    // 25), in whichever database the tenant's log is then; the move is judged by the rest.
    const own = table === AUDIT ? sql`and action <> 'TENANT_DATABASE_ROUTE'` : sql``
    const { rows } = await sql<{ k: string }>`select (${sql.raw(key)})::text as k from ${sql.table(table)}
      where tenant_id = ${tenantId} ${own} order by 1`.execute(db)
    out[table] = rows.map((r) => r.k)
  }
  const grants = await sql<{ k: string }>`select up.user_id || '/' || p.name as k from user_permissions up
    join permissions p on p.id = up.permission_id where up.tenant_id = ${tenantId}
    union all select rp.role_id || '/' || p.name from role_permissions rp
    join permissions p on p.id = rp.permission_id where rp.tenant_id = ${tenantId} order by 1`.execute(db)
  out.user_permissions = grants.rows.map((r) => r.k)
  delete out.role_permissions
  return out
}

const total = (s: Record<string, string[]>) => Object.values(s).reduce((n, v) => n + v.length, 0)

/**
 * The rows of a snapshot but audit rows. A move leaves the audit rows it copied in the database it
 * leaves (the service's role cannot delete them; retention removes them: docs/decisions.md D17).
 */
const withoutAudit = (s: Record<string, string[]>) =>
  Object.fromEntries(Object.entries(s).filter(([table]) => table !== AUDIT))

/** How many relocation marks the database holds for the tenant (tessera_audit.relocations). */
async function marks(db: Kysely<Database>, tenantId: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`select count(*) as n from tessera_audit.relocations
    where tenant_id = ${tenantId}`.execute(db)
  return Number(rows[0]?.n)
}

/** A tenant with a custom permission, a custom role granted built-in and custom permissions, and a user. */
async function populatedTenant(app: Awaited<ReturnType<typeof buildTestApp>>) {
  const tenant = await createTenant(app)
  const db = app.ctx.dbs.forTenant(tenant.id)
  const custom = await db
    .insertInto('permissions')
    .values({ tenant_id: tenant.id, name: 'reports:read', resource: 'reports', action: 'read' })
    .returning('id')
    .executeTakeFirstOrThrow()
  const builtin = await db
    .selectFrom('permissions')
    .select('id')
    .where('tenant_id', 'is', null)
    .where('name', '=', 'roles:read')
    .executeTakeFirstOrThrow()
  const role = await db
    .insertInto('roles')
    .values({ tenant_id: tenant.id, name: 'analyst', level: 10 })
    .returning('id')
    .executeTakeFirstOrThrow()
  await db
    .insertInto('role_permissions')
    .values([
      { tenant_id: tenant.id, role_id: role.id, permission_id: custom.id },
      { tenant_id: tenant.id, role_id: role.id, permission_id: builtin.id },
    ])
    .execute()
  const user = await createUser(app, tenant, { roles: ['analyst', 'user'], permissions: ['users:read'] })
  const admin = await createUser(app, tenant, { roles: ['admin'] })
  return { tenant, user, admin }
}

async function loginOk(t: TapTest, app: FastifyInstance, tenant: TenantFx, user: UserFx) {
  const res = await login(app, tenant.code, user.email)
  t.equal(res.status, 200, 'login')
  return res.body.data as { accessToken: string; refreshToken: string }
}

type App = Awaited<ReturnType<typeof buildTestApp>>

t.test('setTenantDatabase: refusals leave routing unchanged', async (t) => {
  const app = await buildTestApp(t, { DATABASE_ROUTING_ALLOWED_HOSTS: '127.0.0.1,*.db.internal' })
  const { tenant, user } = await populatedTenant(app)
  const before = await snapshot(app.ctx.dbs.main, tenant.id)
  const put = (url: string | null, as = platformKey, id = tenant.id) =>
    call(app, 'setTenantDatabase', as, { params: { id }, body: { url } })

  await t.test('422 DATABASE_ROUTING_FAILED for refused URLs', async (t) => {
    for (const url of [
      'postgres://user:pw@evil.example.com:5432/db',
      'postgres://user:pw@db.internal.evil.com/db',
      'postgres://user:pw@127.0.0.1:5432/db?sslrootcert=/etc/passwd',
      'postgres://user:pw@127.0.0.1:5432/db?sslcert=/etc/passwd&sslkey=/etc/shadow',
      'postgres://user:pw@127.0.0.1:5432/db?passfile=/root/.pgpass',
      'postgres://user:pw@127.0.0.1:5432/db?host=/var/run/postgresql',
      'postgres://user:pw@127.0.0.1:5432/db?options=-c%20search_path%3Devil',
      'postgres://user:pw@127.0.0.1:5432/db?SSLMODE=disable',
      'postgres://user:pw@127.0.0.1:5432/db?ssl=maybe',
      'postgres://%2Fvar%2Frun%2Fpostgresql/db',
      'postgres://user:pw@127.0.0.1:5432/',
    ]) {
      const res = await put(url)
      t.equal(res.status, 422, url)
      t.equal(res.body.code, 'DATABASE_ROUTING_FAILED')
      t.notMatch(res.body.error, /pw|passwd|shadow/, 'the message does not echo the URL')
    }
  })

  await t.test('422 for an unreachable target (allowed host, nothing listening)', async (t) => {
    const res = await put('postgres://user:pw@127.0.0.1:1/nothing')
    t.equal(res.status, 422)
    t.equal(res.body.code, 'DATABASE_ROUTING_FAILED')
  })

  await t.test('400 VALIDATION_ERROR for a missing or non-postgres url', async (t) => {
    for (const body of [{}, { url: 'mysql://x/y' }, { url: 42 }]) {
      const res = await call(app, 'setTenantDatabase', platformKey, {
        params: { id: tenant.id },
        body: unchecked(body),
      })
      t.equal(res.status, 400, JSON.stringify(body))
    }
  })

  await t.test(
    'scope: tenant admin 403 for its own tenant, 404 for another; platform tenant 422',
    async (t) => {
      const other = await createTenant(app)
      const { cred: as } = await userWithToken(app, other, { roles: ['admin'] })
      const own = await put('postgres://u@127.0.0.1/x', as, other.id)
      t.equal(own.status, 403)
      t.equal(own.body.code, 'FORBIDDEN')
      const foreign = await put('postgres://u@127.0.0.1/x', as, tenant.id)
      t.equal(foreign.status, 404)
      t.equal(foreign.body.code, 'TENANT_NOT_FOUND')
      const unknown = await put('postgres://u@127.0.0.1/x', platformKey, randomUUID())
      t.equal(unknown.status, 404)
      const p = await platformTenant(app)
      const platform = await put('postgres://u@127.0.0.1/x', platformKey, p.id)
      t.equal(platform.status, 422)
    },
  )

  await t.test('null for a tenant in the main database is a no-op', async (t) => {
    const res = await put(null)
    t.equal(res.status, 200)
    t.same(res.body.data, { tenantId: tenant.id, dedicated: false, host: null, database: null })
  })

  await t.test('nothing moved: rows, routing and logins as before', async (t) => {
    // Why without audit rows: each refused call wrote its TENANT_DATABASE_ROUTE row (contract section 25).
    const now = await snapshot(app.ctx.dbs.main, tenant.id)
    t.same(withoutAudit(now), withoutAudit(before))
    const refusals = await app.ctx.dbs.main
      .selectFrom('tessera_audit.audit_log')
      .select(['success'])
      .where('tenant_id', '=', tenant.id)
      .where('action', '=', 'TENANT_DATABASE_ROUTE')
      .execute()
    t.ok(
      refusals.filter((r) => !r.success).length >= 5 && refusals.filter((r) => r.success).length === 1,
      'refusal rows for the refused calls, one success row for the no-op',
    )
    t.equal(app.ctx.dbs.routedFor(tenant.id), undefined)
    const rows = await app.ctx.dbs.main.selectFrom('tenant_databases').selectAll().execute()
    t.equal(rows.length, 0)
    await loginOk(t, app, tenant, user)
  })
})

t.test(
  'setTenantDatabase: routing a tenant to its own PostgreSQL database and back',
  { skip: NO_PG },
  async (t) => {
    const app = await buildTestApp(t, ALLOW_TEST_SERVER)
    const target = await openTestDatabase('postgres', { empty: true })
    t.teardown(() => target.close())
    const second = await openTestDatabase('postgres', { empty: true })
    t.teardown(() => second.close())
    const { tenant, user, admin } = await populatedTenant(app)
    const bystander = await populatedTenant(app)
    const key = await createKey(app, tenant, ['tenants:read'])
    const before = await loginOk(t, app, tenant, user)
    t.equal((await login(app, tenant.code, user.email, 'wrong-password')).status, 401)
    const original = await snapshot(app.ctx.dbs.main, tenant.id)
    const bystanderRows = await snapshot(app.ctx.dbs.main, bystander.tenant.id)
    t.equal(original[AUDIT]?.length, 2)

    await t.test(
      '200 moves every row, stores the route encrypted, shows host and database only',
      async (t) => {
        const url = withPassword(target.url, 'not-really-secret-pw')
        const res = await call(app, 'setTenantDatabase', platformKey, {
          params: { id: tenant.id },
          body: { url },
        })
        t.equal(res.status, 200)
        const dbName = new URL(target.url).pathname.slice(1)
        t.same(res.body.data, { tenantId: tenant.id, dedicated: true, host: '127.0.0.1', database: dbName })
        t.notMatch(JSON.stringify(res.body), /not-really-secret-pw/)
        const left = await snapshot(app.ctx.dbs.main, tenant.id)
        t.equal(total(withoutAudit(left)), 0, 'nothing left in main but audit rows')
        t.same(left[AUDIT], original[AUDIT], 'its audit rows stay there until retention')
        t.equal(await marks(app.ctx.dbs.main, tenant.id), 1, 'marked as relocated')
        t.same(await snapshot(target.db, tenant.id), original, 'everything in the target, once')
        t.same(
          await snapshot(app.ctx.dbs.main, bystander.tenant.id),
          bystanderRows,
          'other tenants untouched',
        )
        const stored = await app.ctx.dbs.main
          .selectFrom('tenant_databases')
          .selectAll()
          .executeTakeFirstOrThrow()
        t.notMatch(stored.url_enc, /not-really-secret-pw|postgres/)
        const got = await call(app, 'getTenant', platformKey, { params: { id: tenant.id } })
        t.same(got.body.data.database, { dedicated: true, host: '127.0.0.1', database: dbName })
        const health = await call(app, 'getHealth')
        t.equal(health.body.data.status, 'ok')
        t.equal(health.body.data.routingPool.tenants, 1)
        t.equal(health.body.data.routingPool.pools, 2)
      },
    )

    await t.test('logins, refreshes, tokens, keys and audit rows work on the routed database', async (t) => {
      const refreshed = await refresh(app, before.refreshToken)
      t.equal(refreshed.status, 200, 'a refresh token issued before the move')
      const me = await call(app, 'getMe', { token: before.accessToken })
      t.equal(me.status, 200)
      t.same(me.body.data.roles, ['analyst', 'user'])
      for (const p of ['reports:read', 'roles:read', 'users:read'])
        t.ok(me.body.data.permissions.includes(p), p)
      const again = await loginOk(t, app, tenant, user)
      t.equal((await call(app, 'getTenantMetrics', { key: key.value })).body.data.sessions.active, 2)
      const adminLogin = await loginOk(t, app, tenant, admin)
      const logs = await call(
        app,
        'listAuthLogs',
        { token: adminLogin.accessToken },
        { query: { limit: 500 } },
      )
      t.equal(logs.status, 200)
      t.equal(
        logs.body.data.total,
        6,
        'two before the move, the move’s TENANT_DATABASE_ROUTE (section 25), refresh and two logins after',
      )
      const inTarget = await target.db
        .selectFrom('tessera_audit.audit_log')
        .select('id')
        .where('tenant_id', '=', tenant.id)
        .execute()
      t.equal(inTarget.length, 6)
      t.equal((await refresh(app, again.refreshToken)).status, 200)
    })

    await t.test(
      'a second instance on the same main database routes the tenant at start',
      { skip: mainUrlOf(app) ? false : 'the main database is PGlite in memory' },
      async (t) => {
        const other = await startApp(t, appEnv(app))
        t.ok(other.ctx.dbs.routedFor(tenant.id), 'routed at start')
        t.equal((await login(other, tenant.code, user.email)).status, 200)
        await other.close()
      },
    )

    await t.test(
      'routed to a second database (routed to routed), then the same database again',
      async (t) => {
        const res = await call(app, 'setTenantDatabase', platformKey, {
          params: { id: tenant.id },
          body: {
            url: withPassword(second.url),
          },
        })
        t.equal(res.status, 200)
        const moved = await snapshot(second.db, tenant.id)
        const left = await snapshot(target.db, tenant.id)
        t.equal(total(withoutAudit(left)), 0, 'the first target is emptied but for audit rows')
        t.same(left[AUDIT], moved[AUDIT], 'which were all copied')
        t.equal(await marks(target.db, tenant.id), 1)
        const tenantCopies = await target.db
          .selectFrom('tenants')
          .select('id')
          .where('id', '=', tenant.id)
          .execute()
        t.equal(tenantCopies.length, 0, 'its tenant row copy too')
        const same = await call(app, 'setTenantDatabase', platformKey, {
          params: { id: tenant.id },
          body: {
            url: withPassword(second.url, 'not-really-secret-pw'),
          },
        })
        t.equal(same.status, 200, 'same database, new credentials')
        t.same(await snapshot(second.db, tenant.id), moved, 'nothing copied twice')
        await loginOk(t, app, tenant, user)
      },
    )

    await t.test('null moves everything back to the main database', async (t) => {
      const inSecond = await snapshot(second.db, tenant.id)
      const res = await call(app, 'setTenantDatabase', platformKey, {
        params: { id: tenant.id },
        body: { url: null },
      })
      t.equal(res.status, 200)
      t.same(res.body.data, { tenantId: tenant.id, dedicated: false, host: null, database: null })
      // Main still held the audit rows of before the first move: copied back once each, not twice.
      t.same(await snapshot(app.ctx.dbs.main, tenant.id), inSecond)
      t.equal(total(withoutAudit(await snapshot(second.db, tenant.id))), 0)
      const logs = await call(
        app,
        'listAuthLogs',
        {
          token: (await loginOk(t, app, tenant, admin)).accessToken,
        },
        { query: { limit: 500 } },
      )
      // The snapshot leaves out the routing's own rows: the moves there and back, and the back's row.
      const routes = await app.ctx.dbs.main
        .selectFrom('tessera_audit.audit_log')
        .select('id')
        .where('tenant_id', '=', tenant.id)
        .where('action', '=', 'TENANT_DATABASE_ROUTE')
        .execute()
      t.equal(
        logs.body.data.total,
        (inSecond[AUDIT]?.length ?? 0) + routes.length + 1,
        'every row once, the routing’s own rows, and this login',
      )
      t.equal(app.ctx.dbs.routedFor(tenant.id), undefined)
      t.equal((await app.ctx.dbs.main.selectFrom('tenant_databases').selectAll().execute()).length, 0)
      const back = await loginOk(t, app, tenant, user)
      t.equal((await refresh(app, back.refreshToken)).status, 200)
      const health = await call(app, 'getHealth')
      t.equal(health.body.data.routingPool.tenants, 0)
    })

    await t.test('a failing migration leaves routing unchanged', async (t) => {
      const broken = await openTestDatabase('postgres', { empty: true })
      t.teardown(() => broken.close())
      await sql`create table users (x int)`.execute(broken.db)
      const beforeFail = await snapshot(app.ctx.dbs.main, tenant.id)
      const res = await call(app, 'setTenantDatabase', platformKey, {
        params: { id: tenant.id },
        body: {
          url: withPassword(broken.url),
        },
      })
      t.equal(res.status, 422)
      t.equal(res.body.code, 'DATABASE_ROUTING_FAILED')
      t.same(withoutAudit(await snapshot(app.ctx.dbs.main, tenant.id)), withoutAudit(beforeFail))
      t.equal(app.ctx.dbs.routedFor(tenant.id), undefined)
      await loginOk(t, app, tenant, user)
    })

    const mainUrl = mainUrlOf(app)
    await t.test(
      'the main database itself is refused as a target',
      { skip: mainUrl ? false : 'the main database is PGlite in memory' },
      async (t) => {
        const main = mainUrl as string
        const beforeFail = await snapshot(app.ctx.dbs.main, tenant.id)
        const res = await call(app, 'setTenantDatabase', platformKey, {
          params: { id: tenant.id },
          body: {
            url: withPassword(main),
          },
        })
        t.equal(res.status, 422)
        t.same(withoutAudit(await snapshot(app.ctx.dbs.main, tenant.id)), withoutAudit(beforeFail))
      },
    )

    await t.test(
      'deleting a routed tenant keeps its audit rows (in main) and removes the rest',
      async (t) => {
        const res = await call(app, 'setTenantDatabase', platformKey, {
          params: { id: tenant.id },
          body: {
            url: withPassword(target.url),
          },
        })
        t.equal(res.status, 200)
        const rows = await snapshot(target.db, tenant.id)
        const del = await call(app, 'deleteTenant', platformKey, { params: { id: tenant.id } })
        t.equal(del.status, 200)
        const left = await snapshot(target.db, tenant.id)
        t.equal(total(withoutAudit(left)), 0)
        t.same(left[AUDIT], rows[AUDIT], 'the routed copies stay until retention')
        const kept = await snapshot(app.ctx.dbs.main, tenant.id)
        t.same(kept[AUDIT], rows[AUDIT])
        t.equal(total(kept), kept[AUDIT]?.length)
        t.equal(app.ctx.dbs.routedFor(tenant.id), undefined)
        t.equal((await app.ctx.dbs.main.selectFrom('tenant_databases').selectAll().execute()).length, 0)
      },
    )

    await t.test('a routed database that goes away: health degraded, its requests 503', async (t) => {
      const doomed = await openTestDatabase('postgres', { empty: true })
      const res = await call(app, 'setTenantDatabase', platformKey, {
        params: { id: bystander.tenant.id },
        body: {
          url: withPassword(doomed.url),
        },
      })
      t.equal(res.status, 200)
      await doomed.close()
      const health = await call(app, 'getHealth')
      t.equal(health.status, 200)
      t.equal(health.body.data.status, 'degraded')
      const denied = await login(app, bystander.tenant.code, bystander.user.email)
      t.equal(denied.status, 503)
      t.equal(denied.body.code, 'SERVICE_UNAVAILABLE')
    })
  },
)

/** The environment buildTestApp used, on the same main database (for a restart). */
function appEnv(app: App): Record<string, string> {
  return {
    DATABASE_URL: mainUrlOf(app) ?? 'memory://',
    ...ALLOW_TEST_SERVER,
    LOG_LEVEL: 'silent',
    BOOTSTRAP_CLIENT_KEY: PLATFORM_KEY,
    JWT_SECRET: 'test-default-jwt-secret-0123456789abcdef',
    SECRETS_KEY: 'test-secrets-key-0123456789abcdef0123',
  }
}

function mainUrlOf(app: App): string | undefined {
  const url = app.ctx.config.databaseUrl
  return url && url.startsWith('postgres') ? url : undefined
}

t.test(
  'setTenantDatabase: two instances on one PostgreSQL main, start-up restore and changes made by the other instance',
  { skip: NO_PG },
  async (t) => {
    const main = await createTestDatabaseUrl('postgres')
    t.teardown(() => main.drop())
    const env = {
      DATABASE_URL: main.url,
      ...ALLOW_TEST_SERVER,
      LOG_LEVEL: 'silent',
      BOOTSTRAP_CLIENT_KEY: PLATFORM_KEY,
      JWT_SECRET: 'test-default-jwt-secret-0123456789abcdef',
      SECRETS_KEY: 'test-secrets-key-0123456789abcdef0123',
    }
    const first = await startApp(t, env)
    const other = await startApp(t, env)
    const target = await openTestDatabase('postgres', { empty: true })
    t.teardown(() => target.close())
    const tenant = await createTenant(first)
    const user = await createUser(first, tenant)
    const url = withPassword(target.url)
    const res = await call(first, 'setTenantDatabase', platformKey, {
      params: { id: tenant.id },
      body: { url },
    })
    t.equal(res.status, 200)
    t.ok(await within(5000, () => !!other.ctx.dbs.routedFor(tenant.id)), 'the other instance follows')
    t.equal((await login(other, tenant.code, user.email)).status, 200)

    await first.close()
    const restarted = await startApp(t, env)
    t.ok(restarted.ctx.dbs.routedFor(tenant.id), 'route restored at start')
    t.equal((await login(restarted, tenant.code, user.email)).status, 200)

    t.equal(
      (
        await call(restarted, 'setTenantDatabase', platformKey, {
          params: { id: tenant.id },
          body: { url: null },
        })
      ).status,
      200,
    )
    t.ok(await within(5000, () => !other.ctx.dbs.routedFor(tenant.id)), 'and follows the way back')
    t.equal((await login(other, tenant.code, user.email)).status, 200)

    await call(restarted, 'setTenantDatabase', platformKey, { params: { id: tenant.id }, body: { url } })
    const wrongKey = await buildApp(
      loadConfig({ ...env, SECRETS_KEY: 'another-secrets-key-0123456789abcdef' }),
    ).then(
      (a) => a.close().then(() => 'started'),
      () => 'refused',
    )
    t.equal(wrongKey, 'refused', 'a route that cannot be decrypted stops the start')
  },
)

async function within(ms: number, check: () => boolean): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (check()) return true
    await new Promise((r) => setTimeout(r, 100))
  }
  return check()
}

async function startApp(t: TestLike, env: Record<string, string>) {
  const app = await buildApp(loadConfig(env), { beforeRoutes: (a) => installContractGuard(a, []) })
  t.teardown(() => app.close())
  return app
}
