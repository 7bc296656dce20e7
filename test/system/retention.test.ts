import t from 'tap'
import { randomUUID } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import type { Database } from '../../src/db/database.js'
import { buildTestApp } from '../helpers/app.js'
import { defaultBackend } from '../helpers/db.js'
import { createTenant, createUser, platformKey, routeToOwnDatabase } from '../helpers/fixtures.js'
import { call } from '../helpers/call.js'
import { sweepOnce } from '../../src/modules/system/retention.js'
import { sha256Hex } from '../../src/lib/tokens.js'
import { openPostgres } from '../../src/db/connect.js'

// Retention and sweeping (docs/decisions.md D15): what goes, what stays, in bounded batches, one
// instance at a time, and the audit log still refuses every other removal.

const DAY = 86_400_000
const ago = (days: number) => new Date(Date.now() - days * DAY)

/**
 * A session with its latest refresh token: alive (null), or dead `deadDaysAgo` days ago, revoked or
 * expired. A dead one also has a spent token (rotated, expired as long ago). Returns its id.
 */
async function insertSession(
  db: Kysely<Database>,
  tenantId: string,
  userId: string,
  deadDaysAgo: number | null,
  how: 'revoked' | 'expired' = 'revoked',
) {
  const s = await db
    .insertInto('sessions')
    .values({
      tenant_id: tenantId,
      user_id: userId,
      created_at: ago(60),
      expires_at:
        deadDaysAgo === null ? new Date(Date.now() + DAY) : ago(deadDaysAgo + (how === 'revoked' ? -5 : 0)),
      revoked_at: deadDaysAgo === null || how === 'expired' ? null : ago(deadDaysAgo),
    })
    .returning(['id', 'expires_at'])
    .executeTakeFirstOrThrow()
  const token = (replacedBy: string | null) =>
    db
      .insertInto('refresh_tokens')
      .values({
        tenant_id: tenantId,
        session_id: s.id,
        token_hash: sha256Hex(randomUUID()),
        created_at: ago(60),
        expires_at: s.expires_at,
        replaced_by: replacedBy,
        rotated_at: replacedBy ? ago(59) : null,
        revoked_at: replacedBy ? ago(59) : null,
      })
      .execute()
  await token(null)
  if (deadDaysAgo !== null) await token(randomUUID())
  return s.id
}

t.test('retention: old rows go in bounded batches, recent ones stay', async (t) => {
  const app = await buildTestApp(t, { AUDIT_RETENTION_DAYS: '30', USAGE_RETENTION_DAYS: '90' })
  const db = app.ctx.dbs.main
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant)
  const audit = (days: number) =>
    db
      .insertInto('tessera_audit.audit_log')
      .values({ tenant_id: tenant.id, action: 'LOGIN', success: true, metadata: '{}', created_at: ago(days) })
      .execute()
  for (let i = 0; i < 7; i++) await audit(40 + i)
  for (let i = 0; i < 3; i++) await audit(20)
  const usage = (days: number) =>
    db
      .insertInto('client_key_usage')
      .values({
        tenant_id: tenant.id,
        key_id: randomUUID(),
        method: 'GET',
        route: '/api/v1/me',
        status_code: 200,
        created_at: ago(days),
      })
      .execute()
  for (let i = 0; i < 5; i++) await usage(100)
  await usage(10)
  // Sessions: revoked and expired 40 days ago (gone: 30-day refresh tokens + 1 day), revoked 10 days
  // ago (kept), alive (kept).
  const session = (deadDaysAgo: number | null, how?: 'revoked' | 'expired') =>
    insertSession(db, tenant.id, user.id, deadDaysAgo, how)
  const old = await session(40)
  const expired = await session(40, 'expired')
  const recent = await session(10)
  const alive = await session(null)

  const counts = await sweepOnce(app.ctx, { batch: 3 })
  // The long-dead sessions' tokens go with them (cascade); of the recently dead one's, the spent token
  // goes on its own and its latest stays with it, so a stolen copy is still recognised as reuse.
  t.same(counts, {
    audit: 7,
    usage: 5,
    sessions: 2,
    refreshTokens: 1,
    mfaTokens: 0,
    throttle: 0,
    challenges: 0,
  })
  const left = (table: 'tessera_audit.audit_log' | 'client_key_usage') =>
    db.selectFrom(table).select('id').where('tenant_id', '=', tenant.id).execute()
  t.equal((await left('tessera_audit.audit_log')).length, 3, 'audit rows inside the retention period stay')
  t.equal((await left('client_key_usage')).length, 1, 'usage rows inside the retention period stay')
  const sessions = await db.selectFrom('sessions').select('id').where('tenant_id', '=', tenant.id).execute()
  t.same(new Set(sessions.map((s) => s.id)), new Set([recent, alive]), 'only the long-dead sessions went')
  t.notOk(sessions.some((s) => s.id === old || s.id === expired))
  const tokens = await db
    .selectFrom('refresh_tokens')
    .select('session_id')
    .where('tenant_id', '=', tenant.id)
    .execute()
  t.same(
    new Set(tokens.map((r) => r.session_id)),
    new Set([recent, alive]),
    'spent refresh tokens went too; each session kept its latest',
  )
  t.equal(tokens.length, 2)

  t.same(
    await sweepOnce(app.ctx, { batch: 3 }),
    {
      audit: 0,
      usage: 0,
      sessions: 0,
      refreshTokens: 0,
      mfaTokens: 0,
      throttle: 0,
      challenges: 0,
    },
    'a second pass finds nothing',
  )

  t.test('the audit log still refuses UPDATE, DELETE and TRUNCATE outside retention', async (t) => {
    for (const stmt of [
      sql`update tessera_audit.audit_log set success = false where tenant_id = ${tenant.id}`,
      sql`delete from tessera_audit.audit_log where tenant_id = ${tenant.id}`,
      sql`truncate tessera_audit.audit_log`,
    ]) {
      const err = await stmt.execute(db).then(
        () => null,
        (e: { code?: string }) => e,
      )
      t.equal(err?.code, '42501')
    }
  })
})

t.test('retention: expired sign-up solutions and passkey challenges go, live ones stay', async (t) => {
  const app = await buildTestApp(t)
  const db = app.ctx.dbs.main
  const tenant = await createTenant(app)
  const soon = new Date(Date.now() + 5 * 60_000)
  const past = new Date(Date.now() - 60_000)
  const hex = () => sha256Hex(randomUUID())
  await db
    .insertInto('signup_challenges_used')
    .values([
      { signature: hex(), expires_at: past },
      { signature: hex(), expires_at: soon },
    ])
    .execute()
  const live = hex()
  await db
    .insertInto('passkey_challenges')
    .values([
      { tenant_id: tenant.id, purpose: 'login', challenge_hash: hex(), expires_at: past },
      { tenant_id: tenant.id, purpose: 'login', challenge_hash: live, expires_at: soon },
    ])
    .execute()

  const counts = await sweepOnce(app.ctx)
  t.equal(counts?.challenges, 1, 'the expired used solution went')
  const used = await db.selectFrom('signup_challenges_used').select('expires_at').execute()
  t.same(
    used.map((r) => new Date(r.expires_at).getTime()),
    [soon.getTime()],
    'a solution whose challenge can still verify is remembered',
  )
  const passkey = await db
    .selectFrom('passkey_challenges')
    .select('challenge_hash')
    .where('tenant_id', '=', tenant.id)
    .execute()
  t.same(passkey, [{ challenge_hash: live }], 'only the live passkey challenge stays')
})

t.test('retention: audit rows are kept forever without AUDIT_RETENTION_DAYS', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  await app.ctx.dbs.main
    .insertInto('tessera_audit.audit_log')
    .values({ tenant_id: tenant.id, action: 'LOGIN', success: true, metadata: '{}', created_at: ago(4000) })
    .execute()
  const counts = await sweepOnce(app.ctx)
  t.equal(counts?.audit, 0)
})

t.test(
  'retention: one instance at a time (advisory lock)',
  { skip: defaultBackend() !== 'postgres' ? 'needs PostgreSQL: a second connection holds the lock' : false },
  async (t) => {
    const app = await buildTestApp(t)
    await app.ctx.dbs.main.connection().execute(async (other) => {
      await sql`select pg_advisory_lock(${0x7e55e7a0})`.execute(other)
      t.equal(await sweepOnce(app.ctx), null, 'another holder: this instance does not sweep')
      await sql`select pg_advisory_unlock(${0x7e55e7a0})`.execute(other)
    })
    t.not(await sweepOnce(app.ctx), null, 'free again: it sweeps')
  },
)

t.test(
  'retention: routed tenant databases are swept too, and one that does not answer is skipped',
  {
    skip: process.env.TEST_DATABASE_URL
      ? false
      : 'needs TEST_DATABASE_URL: routing needs a PostgreSQL server',
  },
  async (t) => {
    const app = await buildTestApp(t, {
      DATABASE_ROUTING_ALLOWED_HOSTS: '127.0.0.1',
      AUDIT_RETENTION_DAYS: '30',
    })
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    await routeToOwnDatabase(t, app, tenant)
    // A lifetime set after the move: the routed database's copy of the tenant row still says 30 days.
    const patched = await call(app, 'updateTenantConfig', platformKey, {
      params: { id: tenant.id },
      body: {
        refreshTokenExpiresIn: 90 * 86_400,
      },
    })
    t.equal(patched.status, 200)
    const routed = app.ctx.dbs.storeFor(tenant.id)
    const session = (deadDaysAgo: number | null) => insertSession(routed, tenant.id, user.id, deadDaysAgo)
    await session(100)
    const within90 = await session(40)
    const alive = await session(null)
    const audit = (days: number) =>
      routed
        .insertInto('tessera_audit.audit_log')
        .values({
          tenant_id: tenant.id,
          action: 'LOGIN',
          success: true,
          metadata: '{}',
          created_at: ago(days),
        })
        .execute()
    await audit(40)
    await audit(45)
    await audit(5)
    const counts = await sweepOnce(app.ctx)
    t.match(counts, { audit: 2, sessions: 1, refreshTokens: 1 })
    const left = await routed.selectFrom('sessions').select('id').where('tenant_id', '=', tenant.id).execute()
    t.same(new Set(left.map((s) => s.id)), new Set([within90, alive]), 'by the lifetime of the main database')
    const auditLeft = await routed
      .selectFrom('tessera_audit.audit_log')
      .select('id')
      .where('tenant_id', '=', tenant.id)
      .execute()
    t.ok(auditLeft.length >= 1, 'audit rows inside the retention period stay in the routed database')

    const warnings: string[] = []
    const log = { warn: (_o: object, msg: string) => void warnings.push(msg) }
    const groups = app.ctx.dbs.routedGroups.bind(app.ctx.dbs)
    const dead = openPostgres('postgres://postgres@127.0.0.1:1/none', { connectionTimeoutMillis: 500 })
    app.ctx.dbs.routedGroups = () => groups().map((g) => ({ ...g, db: dead.db }))
    t.teardown(async () => {
      app.ctx.dbs.routedGroups = groups
      await dead.close()
    })
    const again = await sweepOnce(app.ctx, { log })
    t.match(again, { sessions: 0, refreshTokens: 0, mfaTokens: 0 }, 'the main database is still swept')
    t.match(warnings, [/could not be swept/])
  },
)
