import type { FastifyInstance } from 'fastify'
import { Counter } from 'prom-client'
import { defineRawRoute, defineRoute } from '../../lib/route.js'
import { requestMeta } from '../audit/write.js'
import * as federation from './service.js'

/** Federated sign-in module: the browser's flow through another provider and its login (contract section 24). */
export default async function federationRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  const logins = new Counter({
    name: 'tessera_federated_logins_total',
    help: 'Federated sign-ins by result: success, second_factor, failure, or the error a callback ended with.',
    labelNames: ['result'] as const,
    registers: [app.metricsRegistry],
  })
  const count = (result: string) => logins.inc({ result })
  defineRawRoute(app, 'federationAuthorize', async (req, reply) => {
    const started = await federation.startFederation(ctx, {
      tenantCode: req.params.tenantCode,
      providerId: req.params.id,
      returnTo: req.query.return_to,
      codeChallenge: req.query.code_challenge,
    })
    const secure = ctx.config.publicUrl.startsWith('https:') ? '; Secure' : ''
    return reply
      .code(302)
      .header(
        'set-cookie',
        `${federation.FLOW_COOKIE}=${started.binding}; Path=${started.cookiePath}; Max-Age=600; HttpOnly; SameSite=Lax${secure}`,
      )
      .header('location', started.location)
      .send()
  })
  defineRawRoute(app, 'federationCallback', async (req, reply) => {
    const binding = cookieOf(req.headers.cookie, federation.FLOW_COOKIE)
    const url = new URL(req.url, ctx.config.publicUrl)
    const location = await federation.finishFederation(
      ctx,
      { tenantCode: req.params.tenantCode, state: req.query.state, binding, url },
      requestMeta(req),
      count,
    )
    const code = req.params.tenantCode.toLowerCase()
    return reply
      .code(302)
      .header(
        'set-cookie',
        `${federation.FLOW_COOKIE}=; Path=/t/${code}/federation/; Max-Age=0; HttpOnly; SameSite=Lax`,
      )
      .header('location', location)
      .send()
  })
  defineRoute(app, 'loginFederated', async (req) =>
    federation.loginFederated(ctx, req.body, requestMeta(req), count),
  )
}

/** One cookie's value from a Cookie header. */
function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=')
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim()
  }
  return undefined
}
