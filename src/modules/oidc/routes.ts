import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Counter } from 'prom-client'
import { consoleNotBuilt, consoleScope, sendConsolePage } from '../../lib/console-page.js'
import { sendCacheable } from '../../lib/cacheable.js'
import { defineRawRoute, defineRoute } from '../../lib/route.js'
import { principalOf, userOf } from '../../security/request-principal.js'
import { requestMeta } from '../audit/write.js'
import { startLogoutSender } from './backchannel.js'
import { admitRegistration } from './registration.js'
import { recordTokenCall } from './token-audit.js'
import { discoveryDocument, handToProvider, providerOf } from './hand-over.js'
import * as interaction from './interaction.js'
import { listMyOAuthGrants, revokeMyOAuthGrant } from './my-grants.js'
import { ProviderPool, type PooledProvider } from './pool.js'

// OpenID Connect module (contract section 23): each ACTIVE tenant's provider, its discovery document, and the
// interaction's operations. The form-body parser lives in this plugin only (ARCHITECTURE.md).

/** The authorization request asked for offline_access: marked for the consent (the library drops it). */
function markOffline(req: FastifyRequest): void {
  const raw = req.raw
  const url = new URL(raw.url ?? '/', 'http://x')
  url.searchParams.delete('tessera_offline')
  if ((url.searchParams.get('scope') ?? '').split(' ').includes('offline_access'))
    url.searchParams.set('tessera_offline', '1')
  raw.url = url.pathname + url.search
}

/** OpenID Connect module: the protocol endpoints, handed to the tenant's provider, and the interaction. */
export default async function oidcRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  const pool = new ProviderPool(ctx)
  const stopSender = startLogoutSender(ctx, pool, app.log)
  app.addHook('onClose', async () => stopSender())
  const documents = new WeakMap<PooledProvider, Promise<Record<string, unknown>>>()
  const documentOf = (pooled: PooledProvider) => {
    let doc = documents.get(pooled)
    if (!doc) {
      doc = discoveryDocument(ctx, pooled)
      documents.set(pooled, doc)
      doc.catch(() => documents.delete(pooled))
    }
    return doc
  }
  // Why here: RFC 6749 fixes form bodies for these endpoints; every other module keeps refusing them (415).
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 64 * 1024 },
    (_req, body, done) => done(null, body),
  )
  const tokens = new Counter({
    name: 'tessera_oauth_tokens_total',
    help: 'Calls of the OpenID providers’ token endpoints by grant_type and result: issued, refused (400), unauthorized (401), error.',
    labelNames: ['grant_type', 'result'] as const,
    registers: [app.metricsRegistry],
  })
  // Why a hook: the library answers the token endpoint itself; this sees every answer, failures included.
  app.addHook('onResponse', async (req, reply) => {
    if (req.routeOptions.config?.operationId !== 'exchangeOidcToken') return
    const { tenantCode } = req.params as { tenantCode: string }
    const pooled = await pool.get(tenantCode).catch(() => null)
    await recordTokenCall(ctx, pooled, req, reply.raw.statusCode, tokens).catch((err: unknown) =>
      req.log.error({ err }, 'OAUTH_TOKEN audit row not written'),
    )
  })
  defineRawRoute(app, 'authorizeOidc', async (req, reply) => {
    markOffline(req)
    return handToProvider(ctx, pool, req, reply)
  })
  defineRawRoute(app, 'resumeOidcAuthorization', (req, reply) => handToProvider(ctx, pool, req, reply))
  defineRawRoute(app, 'exchangeOidcToken', (req, reply) => handToProvider(ctx, pool, req, reply))
  defineRawRoute(app, 'getOidcUserinfo', (req, reply) => handToProvider(ctx, pool, req, reply))
  defineRawRoute(app, 'postOidcUserinfo', (req, reply) => handToProvider(ctx, pool, req, reply))
  defineRawRoute(app, 'introspectOidcToken', (req, reply) => handToProvider(ctx, pool, req, reply))
  defineRawRoute(app, 'revokeOidcToken', (req, reply) => handToProvider(ctx, pool, req, reply))
  defineRawRoute(app, 'registerOidcClient', async (req, reply) => {
    const pooled = await providerOf(pool, req.params.tenantCode)
    if (!(await admitRegistration(ctx, pooled, req, reply))) return reply
    return handToProvider(ctx, pool, req, reply)
  })
  defineRawRoute(app, 'endOidcSession', (req, reply) => handToProvider(ctx, pool, req, reply))
  defineRawRoute(app, 'confirmOidcEndSession', (req, reply) => handToProvider(ctx, pool, req, reply))
  defineRawRoute(app, 'getOidcLogoutSuccess', (req, reply) => handToProvider(ctx, pool, req, reply))

  defineRawRoute(app, 'getOpenIdConfiguration', async (req, reply) => {
    const pooled = await providerOf(pool, req.params.tenantCode)
    return sendCacheable(req, reply, await documentOf(pooled))
  })
  defineRawRoute(app, 'getOAuthServerMetadata', async (req, reply) => {
    const pooled = await providerOf(pool, req.params.tenantCode)
    return sendCacheable(req, reply, await documentOf(pooled))
  })

  const raw = (req: FastifyRequest, reply: FastifyReply) => ({ req: req.raw, res: reply.raw })
  defineRoute(app, 'getInteractionDetails', async (req, reply) =>
    interaction.getInteractionDetails(
      await providerOf(pool, req.params.tenantCode),
      raw(req, reply),
      req.params.uid,
    ),
  )
  defineRoute(app, 'loginInteraction', async (req, reply) =>
    interaction.loginInteraction(
      ctx,
      await providerOf(pool, req.params.tenantCode),
      raw(req, reply),
      req.params.uid,
      principalOf(req),
    ),
  )
  defineRoute(app, 'consentInteraction', async (req, reply) =>
    interaction.consentInteraction(
      ctx,
      await providerOf(pool, req.params.tenantCode),
      raw(req, reply),
      req.params.uid,
      principalOf(req),
      req.body.approve,
      requestMeta(req),
    ),
  )
  defineRoute(app, 'abortInteraction', async (req, reply) =>
    interaction.abortInteraction(
      await providerOf(pool, req.params.tenantCode),
      raw(req, reply),
      req.params.uid,
    ),
  )
  defineRoute(app, 'listMyOAuthGrants', async (req) => listMyOAuthGrants(ctx, userOf(req)))
  defineRoute(app, 'revokeMyOAuthGrant', async (req) =>
    revokeMyOAuthGrant(ctx, userOf(req), req.params.clientId),
  )
  await app.register(interactionPage, { pool })
}

/** getInteractionPage: the console's sign-in as the provider's page, in the console's scope (CSP, no framing). */
async function interactionPage(page: FastifyInstance, opts: { pool: ProviderPool }): Promise<void> {
  const root = page.consoleRoot
  await consoleScope(page, root, { files: false, logos: true })
  defineRawRoute(page, 'getInteractionPage', async (req, reply) => {
    await providerOf(opts.pool, req.params.tenantCode)
    return root ? sendConsolePage(reply) : consoleNotBuilt(reply)
  })
}
