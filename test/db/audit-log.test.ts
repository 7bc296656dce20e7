import { randomUUID } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import t from 'tap'
import type { Database } from '../../src/db/database.js'
import { forEachBackend } from '../helpers/db.js'

async function insertRow(db: Kysely<Database>, tenantId: string): Promise<string> {
  const row = await db
    .insertInto('audit_log')
    .values({ tenant_id: tenantId, action: 'LOGIN', success: false, metadata: { reason: 'test' } })
    .returning('id')
    .executeTakeFirstOrThrow()
  return row.id
}

async function count(db: Kysely<Database>, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('audit_log')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow()
  return row.n
}

/** The SQLSTATE a statement fails with, or 'ok'. */
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { code?: string }) => e.code ?? 'no code',
  )

t.test('audit_log refuses UPDATE, DELETE and TRUNCATE', (t) =>
  forEachBackend(t, async (t, { db }) => {
    const tenantId = randomUUID()
    const id = await insertRow(db, tenantId)
    t.equal(
      await outcome(db.updateTable('audit_log').set({ success: true }).where('id', '=', id).execute()),
      '42501',
    )
    t.equal(await outcome(db.deleteFrom('audit_log').where('id', '=', id).execute()), '42501')
    t.equal(await outcome(sql`truncate audit_log`.execute(db)), '42501')
    t.equal(await count(db, tenantId), 1, 'the row is still there')
    const row = await db.selectFrom('audit_log').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
    t.equal(row.success, false)
    t.same(row.metadata, { reason: 'test' })
  }),
)

t.test('DELETE is allowed only inside a transaction that set tessera.audit_relocation', (t) =>
  forEachBackend(t, async (t, { db }) => {
    const tenantId = randomUUID()
    await insertRow(db, tenantId)
    await insertRow(db, tenantId)

    // Any other value keeps the rows.
    const wrong = db.transaction().execute(async (trx) => {
      await sql`set local tessera.audit_relocation = 'yes'`.execute(trx)
      await trx.deleteFrom('audit_log').where('tenant_id', '=', tenantId).execute()
    })
    t.equal(await outcome(wrong), '42501')

    const deleted = await db.transaction().execute(async (trx) => {
      await sql`set local tessera.audit_relocation = 'on'`.execute(trx)
      return trx.deleteFrom('audit_log').where('tenant_id', '=', tenantId).executeTakeFirst()
    })
    t.equal(deleted.numDeletedRows, 2n)
    t.equal(await count(db, tenantId), 0)

    // SET LOCAL ended with the transaction: the same session refuses again (PGlite has only one session).
    await insertRow(db, tenantId)
    t.equal(await outcome(db.deleteFrom('audit_log').where('tenant_id', '=', tenantId).execute()), '42501')
    // TRUNCATE stays refused even with the setting.
    const truncate = db.transaction().execute(async (trx) => {
      await sql`set local tessera.audit_relocation = 'on'`.execute(trx)
      await sql`truncate audit_log`.execute(trx)
    })
    t.equal(await outcome(truncate), '42501')
    t.equal(await count(db, tenantId), 1)
  }),
)

t.test('audit rows outlive their tenant', (t) =>
  forEachBackend(t, async (t, { db }) => {
    const tenant = await db
      .insertInto('tenants')
      .values({ code: 'gone', name: 'Gone' })
      .returning('id')
      .executeTakeFirstOrThrow()
    await insertRow(db, tenant.id)
    await db.deleteFrom('tenants').where('id', '=', tenant.id).execute()
    t.equal(await count(db, tenant.id), 1)
  }),
)

t.test('action and actor_type are checked', (t) =>
  forEachBackend(t, async (t, { db }) => {
    const base = { tenant_id: randomUUID(), success: true }
    const bad = { ...base, action: 'NOPE' } as unknown as {
      tenant_id: string
      success: boolean
      action: 'LOGIN'
    }
    t.equal(await outcome(db.insertInto('audit_log').values(bad).execute()), '23514')
    const actor = { ...base, action: 'LOGIN', actor_type: 'robot' } as unknown as typeof bad
    t.equal(await outcome(db.insertInto('audit_log').values(actor).execute()), '23514')
  }),
)
