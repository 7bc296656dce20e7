import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { AppError, errorStatus, type ErrorCode } from '../errors.js'
import { isDatabaseUnavailable } from '../db/connect.js'
import { bucketOf, DEFAULT_BUDGET } from './rate-limit.js'

export interface ErrorBody {
  success: false
  error: string
  code: ErrorCode
  details?: unknown
}

// The document's bounds of an error body (ErrorMessage, ValidationIssue, ErrorDetails). Why: messages
// and issue paths can repeat what the request sent (unknown property names, lists of unknown permission
// names), so without them one 64 KiB body could be answered with several times as much.
const MAX_MESSAGE = 1024
const MAX_ISSUES = 100
const MAX_ISSUE_TEXT = 256
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001F\u007F]/g

/** One line of at most `max` code points: control characters become U+FFFD, a longer text ends in `…`. */
function oneLine(text: string, max: number): string {
  const s = text.replace(CONTROL, '\uFFFD')
  if (s.length <= max) return s
  const points = [...s]
  return points.length <= max ? s : points.slice(0, max - 1).join('') + '…'
}

function boundedIssues(details: unknown[]): unknown[] {
  return details.slice(0, MAX_ISSUES).map((i) => {
    const { path, message } = i as { path?: unknown; message?: unknown }
    return typeof path === 'string' && typeof message === 'string'
      ? { path: oneLine(path, MAX_ISSUE_TEXT), message: oneLine(message, MAX_ISSUE_TEXT) }
      : i
  })
}

/** Builds the failure envelope within the document's bounds; nothing else is ever added to it. */
export function errorBody(code: ErrorCode, error: string, details?: unknown): ErrorBody {
  const text = oneLine(error, MAX_MESSAGE)
  if (details === undefined) return { success: false, error: text, code }
  const bounded = code === 'VALIDATION_ERROR' && Array.isArray(details) ? boundedIssues(details) : details
  return { success: false, error: text, code, details: bounded }
}

interface AjvIssue {
  instancePath?: string
  message?: string
  keyword?: string
  params?: Record<string, unknown>
}

/** Ajv errors as the document's `ValidationIssue` list: `body.email`, `query.limit`, `params.id`. */
export function validationDetails(
  issues: AjvIssue[],
  context: string | undefined,
): { path: string; message: string }[] {
  const part = context === 'querystring' ? 'query' : (context ?? 'body')
  return issues.map((i) => {
    const segs = (i.instancePath ?? '')
      .split('/')
      .filter(Boolean)
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    const extra = i.params?.missingProperty ?? i.params?.additionalProperty
    if (typeof extra === 'string') segs.push(extra)
    const message =
      i.keyword === 'additionalProperties'
        ? 'is not allowed'
        : (i.message ?? 'is invalid').replace(/^must /, 'must ')
    return { path: [part, ...segs].join('.'), message }
  })
}

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_ERROR',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'VALIDATION_ERROR',
  FST_ERR_CTP_INVALID_JSON_BODY: 'VALIDATION_ERROR',
  FST_ERR_VALIDATION: 'VALIDATION_ERROR',
}

/** Maps any thrown value to a public code, message and details, never leaking internals. */
export function toPublicError(err: unknown): { code: ErrorCode; message: string; details?: unknown } {
  if (err instanceof AppError) return { code: err.code, message: err.message, details: err.details }
  const e = err as FastifyError & { validationContext?: string }
  if (e && Array.isArray(e.validation)) {
    return {
      code: 'VALIDATION_ERROR',
      message: 'Request validation failed',
      details: validationDetails(e.validation as AjvIssue[], e.validationContext),
    }
  }
  const code = e && typeof e.code === 'string' ? FASTIFY_CODES[e.code] : undefined
  if (code) {
    return {
      code,
      message: code === 'VALIDATION_ERROR' ? 'Malformed request body' : new AppError(code).message,
    }
  }
  if (e && e.statusCode === 429) return { code: 'RATE_LIMIT_EXCEEDED', message: 'Rate limit exceeded' }
  if (isDatabaseUnavailable(err)) return { code: 'SERVICE_UNAVAILABLE', message: 'Service unavailable' }
  if (e && e.statusCode === 413) return { code: 'PAYLOAD_TOO_LARGE', message: 'Payload too large' }
  if (e && e.statusCode === 415) return { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Unsupported media type' }
  if (e && e.statusCode === 400) return { code: 'VALIDATION_ERROR', message: 'Malformed request' }
  return { code: 'INTERNAL_ERROR', message: 'Internal server error' }
}

async function errorsPlugin(app: FastifyInstance): Promise<void> {
  app.setErrorHandler(async (err, req: FastifyRequest, reply) => {
    let pub = toPublicError(err)
    // Why: a request refused while its body was read (too large, wrong media type, malformed JSON) never
    // reached the gate, so it would spend no per-IP budget and could be sent without limit. It is counted
    // here (the default budget: its body named no tenant), and is answered 429 once the budget is spent.
    // The gate sets rateLimitMax before counting, so nothing is counted twice.
    // A route exempt from every budget (GET /health) stays exempt when it refuses.
    const bucket = bucketOf(req.routeOptions.config?.spec)
    if (
      bucket !== null &&
      req.rateLimitMax === undefined &&
      errorStatus[pub.code] < 500 &&
      pub.code !== 'RATE_LIMIT_EXCEEDED'
    ) {
      try {
        await app.checkRateLimit(req, reply, bucket, DEFAULT_BUDGET[bucket])
      } catch (limited) {
        pub = toPublicError(limited)
      }
    }
    if (pub.code === 'INTERNAL_ERROR') req.log.error({ err }, 'unhandled error')
    else if (pub.code === 'SERVICE_UNAVAILABLE') req.log.warn({ err }, 'database unavailable')
    const e = err as { headers?: Record<string, string> }
    if (pub.code === 'RATE_LIMIT_EXCEEDED' && e.headers) reply.headers(e.headers)
    return reply.code(errorStatus[pub.code]).send(errorBody(pub.code, pub.message, pub.details))
  })

  // Why: Node's own check (requireHostHeader, turned off in app.ts) answers an HTTP/1.1 request without
  // a Host header with a bare 400: no envelope, no request id. A callback hook: it almost never has work.
  app.addHook('onRequest', (req, reply, done) => {
    if (req.headers.host !== undefined || req.raw.httpVersion !== '1.1') return done()
    reply.header('connection', 'close')
    reply.code(400).send(errorBody('VALIDATION_ERROR', 'Missing Host header'))
  })

  // The gate's hooks run for this handler too, so a 404 spends the same per-IP budget as any route.
  app.setNotFoundHandler((_req, reply) => reply.code(404).send(errorBody('NOT_FOUND', 'Route not found')))

  // Why: every route takes JSON only; a text/plain body is a 415, not a string to validate.
  app.removeContentTypeParser('text/plain')
  // Why: an empty body with a JSON content type is "no body" (POST /validate), not a parse error.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string
    if (text.trim() === '') return done(null, undefined)
    try {
      done(null, JSON.parse(text))
    } catch {
      done(
        Object.assign(new Error('Malformed JSON body'), {
          statusCode: 400,
          code: 'FST_ERR_CTP_INVALID_JSON_BODY',
        }),
      )
    }
  })
}

export default fp(errorsPlugin, { name: 'errors', dependencies: [] })
