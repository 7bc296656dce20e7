import t from 'tap'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { buildTestApp } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import { createTenant, createUser } from '../helpers/fixtures.js'
import { createManualClock } from '../../src/lib/clock.js'
import { loadConfig } from '../../src/config.js'
import { backoffMs, MAX_ATTEMPTS, mailerOf } from '../../src/modules/email/sender.js'
import { claimDue } from '../../src/modules/email/queries.js'
import { sweepOnce } from '../../src/modules/system/retention.js'
import { appWithMail, startSmtp, tokenOf } from './smtp.js'

// The outbox under faults, the log:// transport, redaction, escaping, metrics and health.

const forgot = (app: Awaited<ReturnType<typeof buildTestApp>>, tenantCode: string, identifier: string) =>
  call(app, 'forgotPassword', {}, { body: { tenantCode, identifier } })

t.test(
  'forgotPassword: a server that answers 4xx, then accepts: the message arrives once, after it recovers',
  async (t) => {
    const smtp = await startSmtp()
    t.teardown(() => smtp.close())
    const clock = createManualClock()
    const lines: string[] = []
    const app = await buildTestApp(
      t,
      { SMTP_URL: smtp.url, MAIL_FROM: 'no-reply@example.test', LOG_LEVEL: 'trace' },
      { clock, logStream: { write: (l: string) => void lines.push(l) } },
    )
    const mailer = mailerOf(app.ctx)!
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    smtp.failNext(2)
    t.equal((await forgot(app, tenant.code, user.email)).status, 202, 'the request does not wait for SMTP')
    await mailer.idle()
    t.equal(smtp.messages.length, 0)
    t.equal(mailer.counts.retry, 1)
    // Not due before its backoff.
    clock.advance(backoffMs(1) - 1000)
    mailer.nudge()
    await mailer.idle()
    t.equal(mailer.counts.retry, 1, 'not retried before the backoff')
    const failing = await call(app, 'getHealth')
    t.same(
      failing.data.mail,
      { status: 'failing', pending: 1, oldestPendingSeconds: Math.floor((backoffMs(1) - 1000) / 1000) },
      'health says the SMTP server refuses, with the backlog',
    )
    t.equal(failing.data.status, 'ok', 'a refusing SMTP server never degrades the service')
    clock.advance(1000)
    mailer.nudge()
    await mailer.idle()
    t.equal(mailer.counts.retry, 2)
    clock.advance(backoffMs(2))
    mailer.nudge()
    await mailer.idle()
    t.equal(await smtp.waitForCount(1), 1, 'delivered after the server recovered')
    clock.advance(backoffMs(3) * 4)
    mailer.nudge()
    await mailer.idle()
    t.equal(smtp.messages.length, 1, 'delivered once')
    t.same(mailer.counts, { sent: 1, retry: 2, failed: 0, expired: 0 })
    const rows = await app.ctx.dbs
      .forTenant(tenant.id)
      .withTables<{ mail_outbox: { status: string; message_enc: string | null; attempts: number } }>()
      .selectFrom('mail_outbox')
      .select(['status', 'message_enc', 'attempts'])
      .execute()
    t.same(rows, [{ status: 'sent', message_enc: null, attempts: 3 }], 'settled, the message cleared')
    const token = tokenOf(smtp.messages[0]!)
    const all = lines.join('\n')
    t.notMatch(all, token, 'no token in any log line')
    t.notMatch(all, /reset-password\?/, 'no link in any log line')

    const metrics = await call(app, 'getMetrics')
    t.match(metrics.raw, /tessera_mail_sent_total\{result="sent"\} 1/)
    t.match(metrics.raw, /tessera_mail_sent_total\{result="retry"\} 2/)
    t.match(metrics.raw, /tessera_mail_outbox_pending 0/)
    const health = await call(app, 'getHealth')
    t.same(health.data.mail, { status: 'up', pending: 0, oldestPendingSeconds: 0 })
  },
)

t.test(
  'forgotPassword: SMTP down for the whole request: 202, the row waits, and is given up after 6 tries over 15 minutes',
  async (t) => {
    const clock = createManualClock()
    // A port nobody listens on: every try is refused.
    const probe = await startSmtp()
    const url = probe.url
    await probe.close()
    const app = await buildTestApp(t, { SMTP_URL: url, MAIL_FROM: 'no-reply@example.test' }, { clock })
    const mailer = mailerOf(app.ctx)!
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant, {})
    await app.ctx.dbs.main
      .updateTable('tenants')
      .set({ auth_config: JSON.stringify({ email: { passwordResetTtlSeconds: 86_400 } }) })
      .where('id', '=', tenant.id)
      .execute()
    app.ctx.tenants.invalidate(tenant.id)
    t.equal((await forgot(app, tenant.code, user.email)).status, 202)
    await mailer.idle()
    const health = await call(app, 'getHealth')
    t.equal(health.data.mail?.pending, 1, 'health shows the backlog')
    t.equal(health.data.status, 'ok', 'a backlog never degrades the service')
    let spent = 0
    for (let i = 1; i < MAX_ATTEMPTS; i++) {
      clock.advance(backoffMs(i))
      spent += backoffMs(i)
      mailer.nudge()
      await mailer.idle()
    }
    t.ok(spent >= 600_000, 'at least 10 minutes of retries')
    t.same(mailer.counts, { sent: 0, retry: MAX_ATTEMPTS - 1, failed: 1, expired: 0 })
  },
)

t.test(
  'forgotPassword: a row leased by a sender that died after the commit is sent once its lease ends',
  async (t) => {
    const clock = createManualClock()
    const { smtp, app, mailer } = await appWithMail(t, { clock })
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    // No pass runs while stopped: the request commits its row, and a "dead" sender leases it. Why ready
    // first: the app starts its sender when it becomes ready, which inject would do on the first request.
    await app.ready()
    await mailer.stop()
    t.equal((await forgot(app, tenant.code, user.email)).status, 202)
    await mailer.idle()
    const now = new Date(clock.now())
    const leased = await claimDue(app.ctx.dbs.main, now, new Date(now.getTime() + 60_000), 10)
    t.equal(leased.length, 1, 'the dead sender holds the row')
    mailer.start()
    await mailer.idle()
    t.equal(smtp.messages.length, 0, 'nobody else takes a leased row')
    clock.advance(61_000)
    mailer.nudge()
    await mailer.idle()
    t.equal(await smtp.waitForCount(1), 1, 'delivered once the lease ended')
    clock.advance(120_000)
    mailer.nudge()
    await mailer.idle()
    t.equal(smtp.messages.length, 1, 'and only once')
  },
)

t.test(
  'forgotPassword: SMTP_URL=log:// writes the whole message to the log at info, and sends nothing',
  async (t) => {
    const lines: string[] = []
    const app = await buildTestApp(
      t,
      { SMTP_URL: 'log://', LOG_LEVEL: 'info' },
      { logStream: { write: (l: string) => void lines.push(l) } },
    )
    const mailer = mailerOf(app.ctx)!
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    t.equal((await forgot(app, tenant.code, user.email)).status, 202)
    await mailer.idle()
    const mail = lines
      .map((l) => JSON.parse(l) as { msg: string; level: number; mail?: { message: string } })
      .filter((l) => l.mail)
    t.equal(mail.length, 1)
    t.equal(mail[0]?.level, 30, 'info')
    t.match(mail[0]?.mail?.message, /Auto-Submitted: auto-generated/)
    t.match(mail[0]?.mail?.message, /token=/)
  },
)

t.test('config: SMTP_URL and MAIL_FROM', async (t) => {
  const base = { DATABASE_URL: 'memory://' }
  t.equal(loadConfig(base).smtpUrl, undefined, 'unset: mail off')
  t.throws(
    () =>
      loadConfig({
        ...base,
        SMTP_URL: 'log://',
        NODE_ENV: 'production',
        JWT_SECRET: 'x'.repeat(32),
        SECRETS_KEY: 'y'.repeat(32),
      }),
    /log:\/\/ is refused/,
  )
  t.throws(() => loadConfig({ ...base, SMTP_URL: 'smtp://mail.example.test:587' }), /MAIL_FROM is required/)
  t.throws(() => loadConfig({ ...base, SMTP_URL: 'http://mail.example.test' }), /SMTP_URL must be/)
  t.throws(() => loadConfig({ ...base, SMTP_URL: 'log://', MAIL_FROM: 'a <b' }), /MAIL_FROM must be/)
  const ok = loadConfig({
    ...base,
    SMTP_URL: 'smtps://u:p@mail.example.test',
    MAIL_FROM: 'Acme <no-reply@acme.test>',
  })
  t.equal(ok.mailFrom, 'Acme <no-reply@acme.test>')
})

t.test(
  'forgotPassword: a server that hangs costs a retry (bounded timeouts), and the mail arrives once it answers',
  async (t) => {
    const sockets = new Set<Socket>()
    // Accepts connections and never greets: nodemailer's greeting timeout (10 s) ends the try.
    const hanging = createServer((s) => {
      sockets.add(s)
    })
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r))
    const port = (hanging.address() as AddressInfo).port
    const clock = createManualClock()
    const app = await buildTestApp(
      t,
      { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'no-reply@example.test' },
      { clock },
    )
    const mailer = mailerOf(app.ctx)!
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    const started = Date.now()
    const res = await forgot(app, tenant.code, user.email)
    t.equal(res.status, 202)
    t.ok(Date.now() - started < 5000, 'the request did not wait for the hanging server')
    await mailer.idle()
    t.equal(mailer.counts.retry, 1, 'the hang ended as a failed try')
    for (const s of sockets) s.destroy()
    await new Promise<void>((r) => hanging.close(() => r()))
    const smtp = await startSmtp(port)
    t.teardown(() => smtp.close())
    clock.advance(backoffMs(1))
    mailer.nudge()
    await mailer.idle()
    t.equal(await smtp.waitForCount(1), 1, 'delivered once the server answers')
    t.equal(mailer.counts.sent, 1)
  },
)

t.test(
  'forgotPassword: the sweeper removes settled outbox rows after a week and spent tokens after a day',
  async (t) => {
    const { smtp, app, mailer } = await appWithMail(t)
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    t.equal((await forgot(app, tenant.code, user.email)).status, 202)
    await mailer.idle()
    t.equal(await smtp.waitForCount(1), 1)
    const db = app.ctx.dbs.forTenant(tenant.id)
    const counts = async () => ({
      outbox: (await db.selectFrom('mail_outbox').select('id').execute()).length,
      tokens: (await db.selectFrom('email_tokens').select('id').execute()).length,
    })
    await sweepOnce(app.ctx, { now: new Date(Date.now() + 2 * 86_400_000) })
    t.same(await counts(), { outbox: 1, tokens: 0 }, 'the expired token goes after a day; the sent row stays')
    await sweepOnce(app.ctx, { now: new Date(Date.now() + 8 * 86_400_000) })
    t.same(await counts(), { outbox: 0, tokens: 0 }, 'the sent row goes after a week')
  },
)
