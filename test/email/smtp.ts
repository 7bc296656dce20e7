import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server'
import { simpleParser, type ParsedMail } from 'mailparser'
import type { AddressInfo } from 'node:net'
import type { AppOptions } from '../../src/app.js'
import { mailerOf, type Mailer } from '../../src/modules/email/sender.js'
import { buildTestApp, type TestApp, type TestLike } from '../helpers/app.js'

/** A real SMTP server on 127.0.0.1 (port 0) that keeps what arrives, parsed; `failNext` answers 4xx first. */
export interface TestSmtp {
  url: string
  port: number
  messages: ParsedMail[]
  /** The next `n` messages get `451 try again later` instead of being accepted. */
  failNext(n: number): void
  /** Waits until `n` messages arrived (or `ms` passed); returns how many did. */
  waitForCount(n: number, ms?: number): Promise<number>
  close(): Promise<void>
}

/** Starts the in-process SMTP server the email tests deliver to (smtp-server, read back with mailparser). */
export async function startSmtp(port = 0): Promise<TestSmtp> {
  const messages: ParsedMail[] = []
  let failing = 0
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(
      stream: SMTPServerDataStream,
      _session: SMTPServerSession,
      callback: (err?: Error | null) => void,
    ) {
      simpleParser(stream)
        .then((mail) => {
          if (failing > 0) {
            failing--
            const err = Object.assign(new Error('try again later'), { responseCode: 451 })
            callback(err)
            return
          }
          messages.push(mail)
          callback()
        })
        .catch((err: Error) => callback(err))
    },
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const actual = (server.server.address() as AddressInfo).port
  return {
    url: `smtp://127.0.0.1:${actual}`,
    port: actual,
    messages,
    failNext: (n) => {
      failing = n
    },
    async waitForCount(n, ms = 5000) {
      const start = Date.now()
      while (messages.length < n && Date.now() - start < ms) await new Promise((r) => setTimeout(r, 20))
      return messages.length
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** The token of the first link in a message's text. */
export function tokenOf(mail: ParsedMail): string {
  const m = /token=([A-Za-z0-9_-]+)/.exec(mail.text ?? '')
  if (!m?.[1]) throw new Error(`no token in: ${mail.text ?? ''}`)
  return m[1]
}

/** Runs `act`, waits for the outbox to drain, and returns the token of the one mail it sent. */
export async function tokenFrom(
  smtp: TestSmtp,
  mailer: { idle(): Promise<void> },
  act: () => Promise<unknown>,
): Promise<string> {
  await mailer.idle()
  const before = smtp.messages.length
  await act()
  await mailer.idle()
  if ((await smtp.waitForCount(before + 1)) !== before + 1) throw new Error('no mail arrived')
  return tokenOf(smtp.messages[before]!)
}

/** A test app that mails to a fresh in-process SMTP server (both closed in teardown), and its sender. */
export async function appWithMail(
  t: TestLike,
  options: AppOptions = {},
  from = 'no-reply@example.test',
): Promise<{ smtp: TestSmtp; app: TestApp; mailer: Mailer }> {
  const smtp = await startSmtp()
  t.teardown(() => smtp.close())
  const app = await buildTestApp(t, { SMTP_URL: smtp.url, MAIL_FROM: from }, options)
  const mailer = mailerOf(app.ctx)
  if (!mailer) throw new Error('mail is on, so the app has a mailer')
  return { smtp, app, mailer }
}
