import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import { createTenant, createUser, routeToOwnDatabase } from '../helpers/fixtures.js'
import { mailerOf } from '../../src/modules/email/sender.js'
import { startSmtp, tokenFrom } from './smtp.js'

// A tenant routed to its own database: its tokens and outbox rows move with it, and the sender delivers
// from every database.

t.test(
  'resetPassword: a token issued before the tenant moved to its own database still works there',
  { skip: process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL (PostgreSQL)' },
  async (t) => {
    const smtp = await startSmtp()
    t.teardown(() => smtp.close())
    const app = await buildTestApp(t, {
      SMTP_URL: smtp.url,
      MAIL_FROM: 'no-reply@example.test',
      DATABASE_ROUTING_ALLOWED_HOSTS: '127.0.0.1,localhost',
    })
    const mailer = mailerOf(app.ctx)!
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    const forgot = () =>
      call(app, 'forgotPassword', {}, { body: { tenantCode: tenant.code, identifier: user.email } })
    const before = await tokenFrom(smtp, mailer, forgot)
    await routeToOwnDatabase(t, app, tenant)
    const reset = await call(
      app,
      'resetPassword',
      {},
      { body: { tenantCode: tenant.code, token: before, newPassword: 'A-brand-new-passphrase-7' } },
    )
    t.equal(reset.status, 200, 'the token moved with the tenant')
    const after = await tokenFrom(smtp, mailer, forgot)
    t.ok(after.length >= 43, 'a mail queued in the routed database is delivered')
    const rows = await app.ctx.dbs
      .forTenant(tenant.id)
      .selectFrom('mail_outbox')
      .select(['status'])
      .where('tenant_id', '=', tenant.id)
      .execute()
    t.same(
      rows.map((r) => r.status),
      ['sent', 'sent'],
      'both rows are in the routed database, sent',
    )
  },
)
