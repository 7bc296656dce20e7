import t from 'tap'
import { twoInstances } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import { createTenant, createUser } from '../helpers/fixtures.js'
import { mailerOf } from '../../src/modules/email/sender.js'
import { startSmtp } from './smtp.js'

// Two instances on one PostgreSQL: each message is delivered once, whichever sender leases it.

t.test(
  'forgotPassword: two instances on one PostgreSQL deliver each message once',
  { skip: process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL (PostgreSQL)' },
  async (t) => {
    const smtp = await startSmtp()
    t.teardown(() => smtp.close())
    const env = { SMTP_URL: smtp.url, MAIL_FROM: 'no-reply@example.test' }
    const { one, two } = await twoInstances(t, env)
    await one.ready()
    await two.ready()
    const tenant = await createTenant(one)
    const users = await Promise.all(Array.from({ length: 12 }, () => createUser(one, tenant)))
    const a = mailerOf(one.ctx)!
    const b = mailerOf(two.ctx)!
    // Requests land on both instances; both senders race for every row.
    await Promise.all(
      users.map((u, i) =>
        call(
          i % 2 ? one : two,
          'forgotPassword',
          {},
          { body: { tenantCode: tenant.code, identifier: u.email } },
        ),
      ),
    )
    for (let i = 0; i < 3; i++) {
      a.nudge()
      b.nudge()
      await Promise.all([a.idle(), b.idle()])
    }
    t.equal(await smtp.waitForCount(12), 12)
    await new Promise((r) => setTimeout(r, 300))
    t.equal(smtp.messages.length, 12, 'no message twice')
    const to = new Set(smtp.messages.map((m) => JSON.stringify(m.to)))
    t.equal(to.size, 12, 'one per user')
    t.equal(a.counts.sent + b.counts.sent, 12)
  },
)

t.test(
  'forgotPassword: the hourly cap per user holds across two instances',
  { skip: process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL (PostgreSQL)' },
  async (t) => {
    const smtp = await startSmtp()
    t.teardown(() => smtp.close())
    const { one, two } = await twoInstances(t, { SMTP_URL: smtp.url, MAIL_FROM: 'no-reply@example.test' })
    const tenant = await createTenant(one)
    const user = await createUser(one, tenant)
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        call(
          i % 2 ? one : two,
          'forgotPassword',
          {},
          { body: { tenantCode: tenant.code, identifier: user.email } },
        ),
      ),
    )
    t.same(new Set(answers.map((a) => a.status)), new Set([202]))
    await Promise.all([mailerOf(one.ctx)!.idle(), mailerOf(two.ctx)!.idle()])
    await smtp.waitForCount(3, 2000)
    await new Promise((r) => setTimeout(r, 300))
    t.equal(smtp.messages.length, 3, 'three mails, from whichever instance')
  },
)
