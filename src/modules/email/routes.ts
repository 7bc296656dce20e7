import type { FastifyInstance, FastifyReply } from 'fastify'
import { Counter, Gauge } from 'prom-client'
import { consoleNotBuilt, consoleScope, sendConsolePage } from '../../lib/console-page.js'
import { defineRawRoute, defineRoute } from '../../lib/route.js'
import { principalOf, userOf } from '../../security/request-principal.js'
import { requestMeta } from '../audit/write.js'
import { Mailer, mailerOf, setMailer, type MailResult } from './sender.js'
import { createMailTransport } from './transport.js'
import { changeMyEmail } from './change.js'
import {
  forgotPassword,
  resetPassword,
  sendMyEmailVerification,
  sendUserEmailVerification,
  verifyEmail,
} from './service.js'

const RESULTS: MailResult[] = ['sent', 'retry', 'failed', 'expired']

/**
 * Email module (openapi/paths/email.yaml): the six operations, the two pages the mails' links open, and,
 * when SMTP_URL is set, the outbox's sender (started with the app, stopped on close) and its metrics.
 */
export default async function emailRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  const { smtpUrl, mailFrom } = ctx.config
  if (smtpUrl !== undefined) {
    const mailer = new Mailer(ctx, createMailTransport(smtpUrl, mailFrom, app.log), app.log)
    setMailer(ctx, mailer)
    app.addHook('onReady', async () => mailer.start())
    app.addHook('onClose', async () => mailer.stop())
  }
  registerMailMetrics(app)

  defineRoute(app, 'forgotPassword', async (req) => forgotPassword(ctx, req.body, requestMeta(req)))
  defineRoute(app, 'resetPassword', async (req) => resetPassword(ctx, req.body, requestMeta(req)))
  defineRoute(app, 'verifyEmail', async (req) => verifyEmail(ctx, req.body, requestMeta(req)))
  defineRoute(app, 'sendMyEmailVerification', async (req) =>
    sendMyEmailVerification(ctx, userOf(req), requestMeta(req)),
  )
  defineRoute(app, 'sendUserEmailVerification', async (req) =>
    sendUserEmailVerification(ctx, principalOf(req), req.params.userId, requestMeta(req)),
  )
  defineRoute(app, 'changeMyEmail', async (req) =>
    changeMyEmail(ctx, userOf(req), req.body, requestMeta(req)),
  )
  await app.register(mailLinkPages)
}

/**
 * getResetPasswordPage, getVerifyEmailPage: the default `resetUrl` and `verifyUrl` (section 18), screens
 * of the console. In a scope of their own, so the console's CSP and no-referrer reach these two routes
 * only. Why the query is not validated: the server reads nothing of the link, the page does.
 */
async function mailLinkPages(pages: FastifyInstance): Promise<void> {
  const root = pages.consoleRoot
  await consoleScope(pages, root, { files: false })
  defineRawRoute(pages, 'getResetPasswordPage', async (_req, reply) => sendMailLinkPage(reply, root), {
    validateQuery: false,
  })
  defineRawRoute(pages, 'getVerifyEmailPage', async (_req, reply) => sendMailLinkPage(reply, root), {
    validateQuery: false,
  })
}

/** A mail link's page: the console's index.html, as the console plugin serves its screens; 503 unbuilt. */
export async function sendMailLinkPage(reply: FastifyReply, root: string | null): Promise<FastifyReply> {
  return root ? sendConsolePage(reply) : consoleNotBuilt(reply)
}

/** tessera_mail_sent_total{result} and tessera_mail_outbox_pending, on the metrics plugin's registry. */
function registerMailMetrics(app: FastifyInstance): void {
  const { ctx } = app
  const registers = [app.metricsRegistry]
  new Counter({
    name: 'tessera_mail_sent_total',
    help: 'Outbox deliveries by result: sent, retry (a failed try that will be tried again), failed (given up), expired (dropped unsent).',
    labelNames: ['result'] as const,
    registers,
    collect() {
      const counts = mailerOf(ctx)?.counts
      this.reset()
      for (const result of RESULTS) this.inc({ result }, counts?.[result] ?? 0)
    },
  })
  new Gauge({
    name: 'tessera_mail_outbox_pending',
    help: 'Messages waiting in the outbox (every database).',
    registers,
    async collect() {
      const mailer = mailerOf(ctx)
      this.set(mailer ? (await mailer.backlog().catch(() => ({ pending: 0 }))).pending : 0)
    },
  })
}
