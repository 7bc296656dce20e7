import type { FastifyInstance } from 'fastify'
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { routes } from '../../generated/routes.js'
import document from '../../generated/openapi.json' with { type: 'json' }

const addFormats = addFormatsModule.default

// Routes that are not API operations and so are not in the document.
const EXEMPT = /^\/(docs|console)(\/|$)/

const documented = new Set(Object.values(routes).map((r) => `${r.method} ${r.url}`))

// (operationId, status) pairs this test process saw answered; scripts/contract-coverage.ts adds up the
// files of every process and fails on a declared status that no test exercised.
const exercised = new Set<string>()
const coverageDir = process.env.CONTRACT_COVERAGE_DIR
if (coverageDir) {
  process.on('exit', () => {
    if (exercised.size === 0) return
    mkdirSync(coverageDir, { recursive: true })
    const file = join(coverageDir, `${process.pid}-${randomBytes(4).toString('hex')}.json`)
    writeFileSync(file, JSON.stringify([...exercised]))
  })
}

let ajv: Ajv | undefined
const validators = new Map<string, ValidateFunction>()

function validatorFor(op: string, status: number): ValidateFunction | null | undefined {
  const key = `${op} ${status}`
  if (validators.has(key)) return validators.get(key)
  const schema = routes[op as keyof typeof routes]?.schema.response?.[String(status)]
  if (!schema) return schema === undefined ? undefined : null
  ajv ??= addFormats(new Ajv({ strict: false, allErrors: true })) as Ajv
  const v = ajv.compile(schema)
  validators.set(key, v)
  return v
}

type Media = Record<string, { schema?: object }>
type Response = { $ref?: string; content?: Media }
const operations = new Map<string, Record<string, Response>>()
for (const methods of Object.values(document.paths as Record<string, Record<string, unknown>>)) {
  for (const op of Object.values(methods) as { operationId?: string; responses?: Record<string, Response> }[])
    if (op.operationId && op.responses) operations.set(op.operationId, op.responses)
}

/** The media types the document declares for an operation's status, `$ref`s followed. */
function declaredMedia(op: string, status: number): Media {
  let r = operations.get(op)?.[String(status)]
  const shared = document.components.responses as Record<string, Response>
  while (r?.$ref) r = shared[r.$ref.split('/').pop() ?? '']
  return r?.content ?? {}
}

/**
 * A text answer (HTML, plain text) checked against its own media type's schema: declared for the status,
 * and its string schema (pattern, length) met. A streamed file cannot be read here; its type still is.
 */
function textProblem(op: string, status: number, ctype: string, payload: unknown): string | null {
  const type = ctype.split(';')[0]?.trim() ?? ''
  const media = declaredMedia(op, status)[type]
  if (!media) return `content type ${type || '(none)'} is not declared for ${status}`
  if (typeof payload !== 'string' || !media.schema) return null
  ajv ??= addFormats(new Ajv({ strict: false, allErrors: true })) as Ajv
  const validate = ajv.compile(media.schema)
  return validate(payload)
    ? null
    : `body does not match its ${type} schema: ${JSON.stringify(validate.errors)}`
}

/**
 * Test-only: every response is checked against the document's schema for its operation and status.
 * A mismatch, an undeclared status or an undocumented route is recorded and turns the response into a
 * 500, so the test that made the request fails where it asserts.
 */
export function installContractGuard(app: FastifyInstance, violations: string[]): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    for (const m of methods) {
      if (m === 'HEAD' || m === 'OPTIONS' || EXEMPT.test(route.url)) continue
      if (!documented.has(`${m} ${route.url}`))
        violations.push(`route not in the document: ${m} ${route.url}`)
    }
  })
  // A protocol endpoint's answer is written by the library (the reply is hijacked: no onSend); its status and
  // media type are checked when the response ends, its body by the real clients of test/oidc/.
  app.addHook('onResponse', async (req, reply) => {
    const op = req.routeOptions.config?.operationId
    const spec = op ? routes[op as keyof typeof routes] : undefined
    if (!op || !spec || !('protocol' in spec) || !reply.sent) return
    const status = reply.raw.statusCode
    const ctype =
      String(reply.raw.getHeader('content-type') ?? '')
        .split(';')[0]
        ?.trim() ?? ''
    const media = declaredMedia(op, status)
    const known = operations.get(op)?.[String(status)] !== undefined
    if (!known)
      violations.push(`${op} ${req.method} ${req.url} → ${status}: status ${status} is not declared`)
    else if (ctype && !media[ctype] && (status < 300 || status >= 400))
      violations.push(`${op} ${req.method} ${req.url} → ${status}: content type ${ctype} is not declared`)
    else exercised.add(`${op} ${status}`)
  })
  app.addHook('onSend', async (req, reply, payload) => {
    const op = req.routeOptions.config?.operationId
    if (!op) return payload
    const status = reply.statusCode
    const declared = routes[op as keyof typeof routes].schema.response ?? {}
    const ctype = String(reply.getHeader('content-type') ?? '')
    let problem: string | null = null
    if (!(String(status) in declared)) {
      // A text/plain operation (metrics) declares no JSON schema; its statuses are checked elsewhere.
      if (ctype.startsWith('application/json')) problem = `status ${status} is not declared`
    } else if (!ctype.startsWith('application/json')) {
      problem = textProblem(op, status, ctype, payload)
    } else {
      const validate = validatorFor(op, status)
      let body: unknown
      try {
        body = typeof payload === 'string' ? JSON.parse(payload) : payload
      } catch {
        problem = 'body is not JSON'
      }
      if (!problem && validate && !validate(body)) {
        problem = `body does not match: ${JSON.stringify(validate.errors)} body=${String(payload).slice(0, 500)}`
      }
    }
    if (!problem) {
      exercised.add(`${op} ${status}`)
      return payload
    }
    const msg = `${op} ${req.method} ${req.url} → ${status}: ${problem}`
    violations.push(msg)
    reply.code(500)
    return JSON.stringify({ success: false, error: `contract violation: ${msg}`, code: 'INTERNAL_ERROR' })
  })
}
