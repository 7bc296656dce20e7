import type { FastifyInstance } from 'fastify'
import { Counter } from 'prom-client'
import { defineRawRoute, defineRoute } from '../../lib/route.js'
import { requestMeta } from '../audit/write.js'
import { principalOf, userOf } from '../../security/request-principal.js'
import * as identities from './identities.js'
import * as federation from './service.js'

/** Federated sign-in module: the browser's flow through another provider, its login, and a person's links (section 24). */
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
      intent: req.query.intent,
      linkToken: req.query.link_token,
    })
    // A link token refused: straight back to return_to with its error, no flow to bind.
    if (started.binding === null) return reply.code(302).header('location', started.location).send()
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
    // Why the registered callback: openid-client sends it as the exchange's redirect_uri, PUBLIC_URL's path included.
    const url = federation.callbackOf(ctx, req.params.tenantCode.toLowerCase(), req.url)
    const location = await federation.finishFederation(
      ctx,
      { tenantCode: req.params.tenantCode, state: req.query.state, binding, url, log: req.log },
      requestMeta(req),
      count,
    )
    const code = req.params.tenantCode.toLowerCase()
    return reply
      .code(302)
      .header(
        'set-cookie',
        `${federation.FLOW_COOKIE}=; Path=${federation.flowCookiePath(ctx, code)}; Max-Age=0; HttpOnly; SameSite=Lax`,
      )
      .header('location', location)
      .send()
  })
  defineRoute(app, 'loginFederated', async (req) =>
    federation.loginFederated(ctx, req.body, requestMeta(req), count),
  )
  defineRoute(app, 'listMyIdentities', async (req) => identities.listMyIdentities(ctx, userOf(req)))
  defineRoute(app, 'createMyIdentityLinkToken', async (req) =>
    identities.createMyIdentityLinkToken(ctx, userOf(req)),
  )
  defineRoute(app, 'deleteMyIdentity', async (req) =>
    identities.deleteMyIdentity(ctx, userOf(req), req.params.id, requestMeta(req)),
  )
  defineRoute(app, 'listUserIdentities', async (req) =>
    identities.listUserIdentities(ctx, principalOf(req), req.params.userId),
  )
  defineRoute(app, 'deleteUserIdentity', async (req) =>
    identities.deleteUserIdentity(ctx, principalOf(req), req.params.userId, req.params.id, requestMeta(req)),
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
