import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { openDatabase } from '../../src/db/connect.js'
import { call, startService, waitReady } from '../helpers/service-process.js'
import { startSmtp } from './smtp.js'

// A crash between the commit and the send: the service is SIGKILLed while its sender holds the row (the
// SMTP server accepted the connection and hangs). A restart on the same data delivers the message once
// the dead sender's lease has run out. Why the test ends the lease itself, in the data directory while no
// service runs: waiting out the real 60 s cost the suite a minute per run, and that a row is claimed again
// exactly when its lease ends is outbox.test.ts's (with a clock the test moves).
t.setTimeout(180_000)

t.test(
  'forgotPassword: SIGKILL between the commit and the send; the restarted service delivers it',
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tessera-email-crash-'))
    t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
    const sockets = new Set<Socket>()
    const hanging = createServer((s) => {
      sockets.add(s)
    })
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r))
    const port = (hanging.address() as AddressInfo).port
    const env = {
      DATA_DIR: dataDir,
      SECRETS_KEY: 'crash-test-secrets-key-0123456789abcdef',
      JWT_SECRET: 'crash-test-jwt-secret-0123456789abcdef00',
      BOOTSTRAP_ADMIN_EMAIL: 'admin@example.test',
      BOOTSTRAP_ADMIN_PASSWORD: 'Admin-passphrase-42',
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      MAIL_FROM: 'no-reply@example.test',
    }
    const first = await startService(env)
    t.teardown(() => first.child.kill('SIGKILL'))
    await waitReady(first, 60_000)
    const res = await call(first.base, 'POST', '/api/v1/password/forgot', {
      tenantCode: 'platform',
      identifier: 'admin@example.test',
    })
    t.equal(res.status, 202)
    // The sender has leased the row and is talking to the server: the commit is done, the send is not.
    const deadline = Date.now() + 20_000
    while (sockets.size === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    t.equal(sockets.size, 1, 'the sender connected')
    first.child.kill('SIGKILL')
    await first.exited
    for (const s of sockets) s.destroy()
    await new Promise<void>((r) => hanging.close(() => r()))
    const data = await openDatabase(undefined, { dataDir })
    const leased = await sql<{ n: number }>`update mail_outbox set locked_until = now() - interval '1 second'
      where status = 'pending' and locked_until > now() returning 1 as n`.execute(data.db)
    await data.close()
    t.equal(leased.rows.length, 1, 'the dead sender still held the row')

    const smtp = await startSmtp(port)
    t.teardown(() => smtp.close())
    const second = await startService(env)
    t.teardown(() => second.child.kill('SIGTERM'))
    await waitReady(second, 60_000)
    t.equal(await smtp.waitForCount(1, 90_000), 1, 'delivered after the restart')
    await new Promise((r) => setTimeout(r, 6000))
    t.equal(smtp.messages.length, 1, 'once')
    t.match(smtp.messages[0]?.text ?? '', /token=/)
  },
)
