import nodemailer from 'nodemailer'
import type { RenderedMessage } from './templates.js'

/** One message ready for the wire. */
export interface Envelope extends RenderedMessage {
  to: string
}

/** Delivers one message or throws; never retries by itself (the outbox does). */
export interface MailTransport {
  send(m: Envelope): Promise<void>
  close(): void
}

type Logger = { info(obj: object, msg: string): void }

/** Fields every message carries: the sender, and the header that tells auto-responders to stay quiet. */
function mailOptions(from: string, m: Envelope) {
  return {
    from,
    to: m.to,
    subject: m.subject,
    text: m.text,
    html: m.html,
    headers: { 'Auto-Submitted': 'auto-generated' },
  }
}

/** A mail as a person reads it: who, what, and the text, between two rules. */
export function readableMail(from: string, m: { to: string; subject: string; text: string }): string {
  const rule = '─'.repeat(72)
  return `\n${rule}\n mail not sent (SMTP_URL=log://)\n From:    ${from}\n To:      ${m.to}\n Subject: ${m.subject}\n${rule}\n${m.text.trimEnd()}\n${rule}\n\n`
}

/**
 * The transport SMTP_URL names: smtp:// or smtps:// through nodemailer (timeouts bounded, so a server
 * that hangs costs a retry rather than a stuck sender), or log://, which writes each whole message to
 * the log at info: the only log line that ever carries a token or a link.
 */
export function createMailTransport(
  smtpUrl: string,
  mailFrom: string | undefined,
  log: Logger,
  terminal: { write: (text: string) => unknown } | undefined = process.stderr.isTTY
    ? process.stderr
    : undefined,
): MailTransport {
  const from = mailFrom ?? 'Tessera <tessera@localhost>'
  if (smtpUrl === 'log://') {
    const stream = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' })
    return {
      async send(m) {
        const info = await stream.sendMail(mailOptions(from, m))
        // Why the text too: the whole message is MIME (a long link comes quoted-printable, `=3D` for `=`),
        // and a developer wants to copy the link.
        log.info(
          { mail: { to: m.to, subject: m.subject, text: m.text, message: String(info.message) } },
          'mail (SMTP_URL=log://, not sent)',
        )
        // Why on a terminal only: a person at `make run` reads the mail there, as a block with its link on a
        // line of its own; a log collector keeps the JSON line above.
        terminal?.write(readableMail(from, m))
      },
      close: () => stream.close(),
    }
  }
  const smtp = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  })
  return {
    async send(m) {
      await smtp.sendMail(mailOptions(from, m))
    },
    close: () => smtp.close(),
  }
}
