import type { FastifyRequest } from 'fastify'
import type { Counter } from 'prom-client'
import type { AppContext } from '../../context.js'
import { requestMeta, writeAudit } from '../audit/write.js'
import type { PooledProvider } from './pool.js'

// Every call of a tenant's token endpoint (contract section 23, "Audit and metrics"): one OAUTH_TOKEN row with
// `{ clientId, grantType }`, failures included, and tessera_oauth_tokens_total{grant_type, result}. Never a
// code, a token, a verifier or a secret.

const GRANTS = new Set(['authorization_code', 'refresh_token', 'client_credentials'])

/** Control characters, left out of a client_id kept in a row (the document's pattern for it). */
// eslint-disable-next-line no-control-regex -- the very characters to drop
const CONTROL = /[\u0000-\u001F\u007F]/g

/** The client the call named: HTTP Basic's user, or the form's client_id; null when neither parses. */
function clientIdOf(req: FastifyRequest, form: URLSearchParams): string | null {
  // Why by code points: a cut between a surrogate pair leaves text that jsonb refuses.
  return (
    Array.from(namedClient(req, form)?.replace(CONTROL, '') ?? '')
      .slice(0, 64)
      .join('') || null
  )
}

/** The client_id as the call sent it. */
function namedClient(req: FastifyRequest, form: URLSearchParams): string | null {
  const auth = req.headers.authorization
  if (typeof auth === 'string' && /^basic /i.test(auth)) {
    const decoded = Buffer.from(auth.slice(6).trim(), 'base64').toString('utf8')
    const user = decoded.slice(0, Math.max(0, decoded.indexOf(':')))
    try {
      return decodeURIComponent(user) || null
    } catch {
      return null
    }
  }
  return form.get('client_id') ?? null
}

/** The result label of a token endpoint answer. */
function resultOf(status: number): string {
  if (status === 200) return 'issued'
  if (status === 400) return 'refused'
  if (status === 401) return 'unauthorized'
  return 'error'
}

/** Counts the call and writes its audit row in the tenant's log (none for a code that names no tenant). */
export async function recordTokenCall(
  ctx: AppContext,
  pooled: PooledProvider | null,
  req: FastifyRequest,
  status: number,
  counter: Counter<'grant_type' | 'result'>,
): Promise<void> {
  const form = new URLSearchParams(typeof req.body === 'string' ? req.body : '')
  const asked = form.get('grant_type') ?? ''
  const grantType = GRANTS.has(asked) ? asked : 'other'
  counter.inc({ grant_type: grantType, result: resultOf(status) })
  if (!pooled) return
  const clientId = clientIdOf(req, form)
  await writeAudit(ctx.dbs.forTenant(pooled.tenant.id), {
    tenantId: pooled.tenant.id,
    action: 'OAUTH_TOKEN',
    success: status === 200,
    errorMessage: status === 200 ? null : resultOf(status),
    metadata: { ...(clientId ? { clientId } : {}), grantType },
    meta: requestMeta(req),
  })
}
