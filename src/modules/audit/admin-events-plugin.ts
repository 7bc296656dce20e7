import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { AuditAction } from '../../db/database.js'
import type { RouteSpec } from '../../lib/route-spec.js'
import { isSuperAdmin } from '../../security/principal.js'
import { requestMeta, writeAudit } from './write.js'

// The administrative events of contract section 25: every authenticated call of an operation the document
// marks with `x-audit` writes one row, `success` false with the error code when it is refused (400, 401,
// 403, 404, 409, 422), with `{ target: { type, id }, changed }` and never a value. The row of a tenant's act
// lands in its log; the platform's act on another tenant lands in both logs while that tenant exists.
//
// Why one hook and not each service: the operations are twenty, their refusals come from the gate (403),
// the validator (400) and the services alike, and the rule is the same for all of them. Why onSend: the row
// is written before the answer leaves, so a caller that reads the log next finds it. It is not in the act's
// transaction; a database that fails between the two loses the row, and says so in the log.

declare module 'fastify' {
  interface FastifyRequest {
    /** The body's own field names, taken before validation fills in defaults (section 25's `changed`). */
    auditFields?: string[]
  }
}

type AuditSpec = NonNullable<RouteSpec['audit']>

/**
 * The body's field names that the operation's schema declares, sorted. Why only those: a refused call's body
 * was never validated, and its caller's own key names must not fill the log.
 */
function keysOf(body: unknown, spec: RouteSpec | undefined): string[] {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return []
  const declared = (spec?.schema.body as { properties?: object } | undefined)?.properties ?? {}
  return Object.keys(body)
    .filter((k) => Object.hasOwn(declared, k))
    .sort()
}

/** The answer's JSON, when it is JSON (an error's code, a created object's id). */
function parsed(payload: unknown): { data?: { id?: unknown }; code?: unknown } {
  if (typeof payload !== 'string') return {}
  try {
    return JSON.parse(payload) as { data?: { id?: unknown }; code?: unknown }
  } catch {
    return {}
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * The id of the call's object: its path's, else (a creation) the answer's; a UUID, lowercased, or none. Why
 * checked here: the row of a call refused for a malformed path id (400) is written too, and the raw text
 * would not fit the row (a uuid column, the document's pattern).
 */
function targetIdOf(req: FastifyRequest, answer: ReturnType<typeof parsed>): string | undefined {
  const params = (req.params ?? {}) as Record<string, unknown>
  const fromPath = params.id ?? params.userId
  const id = fromPath ?? answer.data?.id
  return typeof id === 'string' && UUID.test(id) ? id.toLowerCase() : undefined
}

async function record(
  app: FastifyInstance,
  req: FastifyRequest,
  reply: FastifyReply,
  audit: AuditSpec,
  payload: unknown,
) {
  const p = req.principal
  if (!p) return
  const status = reply.statusCode
  // Why not 429 and 5xx: a throttled call was never judged, and a fault is the service's, not a refusal.
  if (status === 429 || status >= 500) return
  const success = status < 400
  if (success && audit.refusalsOnly) return
  const answer = parsed(payload)
  const targetId = targetIdOf(req, answer)
  const code = answer.code
  const entry = {
    action: audit.action as AuditAction,
    success,
    actor: p,
    userId: audit.target === 'user' && targetId ? targetId : null,
    errorMessage: success ? null : typeof code === 'string' ? code : `HTTP_${status}`,
    metadata: {
      target: { type: audit.target, ...(targetId ? { id: targetId } : {}) },
      changed: [...(audit.changed ?? req.auditFields ?? keysOf(req.body, req.routeOptions.config?.spec))],
    },
    meta: requestMeta(req),
  }
  const logs = new Set([p.tenantId])
  // The platform's act on a tenant: that tenant's log too, while it exists (a deleted one has none). Another
  // tenant's caller never reaches it: its refused try stays in its own log.
  if (
    audit.target === 'tenant' &&
    targetId &&
    targetId !== p.tenantId &&
    isSuperAdmin(p) &&
    (await app.ctx.tenants.byId(targetId))
  )
    logs.add(targetId)
  for (const tenantId of logs) await writeAudit(app.ctx.dbs.forTenant(tenantId), { tenantId, ...entry })
}

/** A route option that may hold one hook or several, as a list. */
const listOf = <H>(hooks: H | H[] | undefined): H[] =>
  hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]

/**
 * Gives each route of an `x-audit` operation its two hooks as it is registered. Why per route: the other
 * operations, the hot paths among them, run no hook of this plugin at all. Registered at the root, before
 * the route modules, so that it sees them.
 */
async function adminEventsPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route) => {
    const spec = (route.config as { spec?: RouteSpec } | undefined)?.spec
    const audit = spec?.audit
    if (!audit) return
    const fields = async (req: FastifyRequest) => {
      req.auditFields = keysOf(req.body, spec)
    }
    const send = async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      await record(app, req, reply, audit, payload).catch((err: unknown) =>
        req.log.error({ err, action: audit.action }, 'administrative event not recorded'),
      )
      return payload
    }
    route.preValidation = [...listOf(route.preValidation), fields] as typeof route.preValidation
    route.onSend = [...listOf(route.onSend), send] as typeof route.onSend
  })
}

export default fp(adminEventsPlugin, { name: 'admin-events', dependencies: ['gate'] })
