import t from 'tap'
import { sql, type Kysely } from 'kysely'
import type { Database } from '../../src/db/database.js'
import { auditSweepDays, sweepOnce } from '../../src/modules/system/retention.js'
import { buildTestApp } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import { openTestDatabase } from '../helpers/db.js'
import { createTenant, createUser, tokenFor } from '../helpers/fixtures.js'

// The audit retention period lives in the database (tessera_audit.settings, docs/decisions.md D17):
// AUDIT_RETENTION_DAYS becomes it where the service's role may change it (a superuser: PGlite, tests),
// and elsewhere the service warns and sweeps with the longer of the two.

const DAY = 86_400_000
const ago = (days: number) => new Date(Date.now() - days * DAY)

const period = async (db: Kysely<Database>) =>
  (await sql<{ days: number | null }>`select retention_days as days from tessera_audit.settings`.execute(db))
    .rows[0]?.days

t.test(
  'retention: AUDIT_RETENTION_DAYS becomes the period at start; GET /auth-logs shows what stays',
  async (t) => {
    const app = await buildTestApp(t, { AUDIT_RETENTION_DAYS: '30' })
    const db = app.ctx.dbs.main
    t.equal(await period(db), 30, 'set at start, before any pass')
    const tenant = await createTenant(app)
    const token = await tokenFor(app, await createUser(app, tenant, { roles: ['admin'] }))
    for (const days of [45, 31, 29, 1]) {
      await db
        .insertInto('tessera_audit.audit_log')
        .values({ tenant_id: tenant.id, action: 'LOGIN', success: true, metadata: {}, created_at: ago(days) })
        .execute()
    }
    const logs = async () => {
      const res = await call(app, 'listAuthLogs', { token }, { query: { limit: 100 } })
      t.equal(res.status, 200)
      return res.body
    }
    t.equal((await logs()).data.total, 4)
    t.match(await sweepOnce(app.ctx), { audit: 2 })
    const after = await logs()
    t.equal(after.data.total, 2, 'rows older than 30 days are gone')
    t.ok(
      after.data.items.every((r: { created_at: string }) => Date.parse(r.created_at) > ago(30).getTime()),
      'the 29-day-old and the recent row stay',
    )
  },
)

t.test('retention: a role that cannot change the period warns once and sweeps with the longer', async (t) => {
  const tdb = await openTestDatabase('pglite')
  t.teardown(tdb.close)
  const db = tdb.db
  await sql`select tessera_audit.set_retention_days(40)`.execute(db)
  await sql`create role tessera_test_reader nologin`.execute(db)
  await sql`grant usage on schema tessera_audit to tessera_test_reader`.execute(db)
  await sql`grant select on tessera_audit.settings to tessera_test_reader`.execute(db)
  const warnings: object[] = []
  const log = { warn: (o: object) => void warnings.push(o) }

  await sql`set role tessera_test_reader`.execute(db)
  const key = {}
  t.equal(await auditSweepDays(db, key, 30, log), 40, 'shorter than the database: the database’s')
  t.equal(await auditSweepDays(db, key, 30, log), 40)
  t.same(warnings, [{ auditRetentionDays: 30, databaseRetentionDays: 40, sweepDays: 40 }], 'said once')
  t.equal(await auditSweepDays(db, key, 50, log), 50, 'longer than the database: AUDIT_RETENTION_DAYS')
  t.equal(await auditSweepDays(db, key, undefined, log), null, 'unset: kept forever')
  t.equal(warnings.length, 3)
  t.equal(await auditSweepDays(db, key, 40, log), 40, 'equal: no warning')
  t.equal(warnings.length, 3)
  t.equal(await period(db), 40, 'unchanged')

  await sql`reset role`.execute(db)
  t.equal(await auditSweepDays(db, {}, 30, log), 30, 'a superuser sets it')
  t.equal(await period(db), 30)
  t.equal(warnings.length, 3)
})
