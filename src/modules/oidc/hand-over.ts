import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import inject from 'light-my-request'
import type { AppContext } from '../../context.js'
import { fail } from '../../errors.js'
import type { PooledProvider, ProviderPool } from './pool.js'

// Handing a request to a tenant's provider. Why each protocol endpoint is a route of ours that hands over,
// not `@fastify/middie` mounting the library under `/t/:code`: a middleware runs before routing, so the
// endpoints would escape the document, the gate, the per-IP budgets (section 9 counts the token endpoint in
// the global one) and the request id; as routes, each is an operation like any other.

type Raw = IncomingMessage & { originalUrl?: string; body?: unknown }

/** The path and query after `/t/{code}` (or after the RFC 8414 prefix). */
function restOf(url: string, prefix: RegExp): string {
  const rest = url.replace(prefix, '')
  return rest.startsWith('/') ? rest : `/${rest}`
}

/** Makes the raw request look as the library expects under the issuer's path, with PUBLIC_URL's origin. */
function prepare(ctx: AppContext, raw: Raw, code: string, rest: string): void {
  const base = new URL(ctx.config.publicUrl)
  raw.originalUrl = `${base.pathname.replace(/\/$/, '')}/t/${code}${rest}`
  raw.url = rest
  // Why set here, whatever the client sent: the provider trusts these (provider.proxy) and builds every URL
  // and the cookies' Secure flag from them.
  raw.headers['x-forwarded-proto'] = base.protocol.slice(0, -1)
  raw.headers['x-forwarded-host'] = base.host
  delete raw.headers['x-forwarded-for']
}

// Each provider's request handler, made once: Koa's callback() composes the middleware anew on every call.
const handlers = new WeakMap<PooledProvider, ReturnType<PooledProvider['provider']['callback']>>()

/** The provider's request handler (Koa's callback), made on first use. */
function handlerOf(pooled: PooledProvider): ReturnType<PooledProvider['provider']['callback']> {
  let handle = handlers.get(pooled)
  if (!handle) handlers.set(pooled, (handle = pooled.provider.callback()))
  return handle
}

/** The pooled provider of the route's tenant; TENANT_NOT_FOUND (in the envelope) for no ACTIVE tenant. */
export async function providerOf(pool: ProviderPool, code: string): Promise<PooledProvider> {
  return (await pool.get(code)) ?? fail('TENANT_NOT_FOUND')
}

/** Hands the request to the tenant's provider, which answers it; the headers our hooks set go with it. */
export async function handToProvider(
  ctx: AppContext,
  pool: ProviderPool,
  req: FastifyRequest<{ Params: { tenantCode: string } }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const pooled = await providerOf(pool, req.params.tenantCode)
  const raw = req.raw as Raw
  prepare(ctx, raw, pooled.tenant.code, restOf(raw.url ?? '/', /^\/t\/[^/?]+/))
  // Why: Fastify read the body already (a form: the string; JSON: the object); the library reads it from here.
  if (req.body !== undefined) raw.body = req.body
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(name, value)
  }
  reply.hijack()
  await handlerOf(pooled)(raw, reply.raw as ServerResponse)
  return reply
}

/** The provider's discovery document, asked of the library in memory (no socket), once per instance. */
export async function discoveryDocument(
  ctx: AppContext,
  pooled: PooledProvider,
): Promise<Record<string, unknown>> {
  const callback = handlerOf(pooled)
  const res = await inject(
    (req, res) => {
      prepare(ctx, req as Raw, pooled.tenant.code, '/.well-known/openid-configuration')
      void callback(req, res)
    },
    { method: 'GET', url: '/.well-known/openid-configuration' },
  )
  if (res.statusCode !== 200) throw new Error(`discovery answered ${res.statusCode}`)
  // Section 23: a request object is refused (request_not_supported), and the document says so.
  return { ...(res.json() as Record<string, unknown>), request_parameter_supported: false }
}
