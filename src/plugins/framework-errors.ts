import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errorStatus, type ErrorCode } from '../errors.js'
import { errorBody } from './errors.js'
import { helmetHeaders } from './security-headers.js'

/*
 * Answers for the failures that happen before a request reaches the app's hooks and error handler, so
 * they too carry the envelope and an X-Request-Id and never echo the request back. Both are Fastify
 * server options (frameworkErrors, clientErrorHandler), wired in app.ts.
 */

let fixedHeaders: Record<string, string> | undefined

const ROUTER_ERRORS: Record<string, { code: ErrorCode; message: string }> = {
  // Broken percent-encoding in a path parameter.
  FST_ERR_BAD_URL: { code: 'VALIDATION_ERROR', message: 'Malformed URL' },
  // Why 400 and not Fastify's 414: an over-long id is a malformed id, like any other; the document
  // declares 400 wherever a path takes a parameter.
  FST_ERR_MAX_PARAM_LENGTH: { code: 'VALIDATION_ERROR', message: 'Path parameter too long' },
}

/**
 * Fastify's `frameworkErrors`: the router's errors (bad URL, over-long parameter). Why the headers are
 * set here: these replies skip every hook, so the request-id and security-header hooks never run.
 */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const known = ROUTER_ERRORS[err.code]
  const { code, message } = known ?? { code: 'INTERNAL_ERROR' as const, message: 'Internal server error' }
  if (!known) req.log.error({ err }, 'unhandled framework error')
  fixedHeaders ??= helmetHeaders()
  reply.headers(fixedHeaders)
  reply.header('x-request-id', req.id)
  reply.header('cache-control', 'no-store')
  reply.code(errorStatus[code]).send(errorBody(code, message))
  // Why: the access log's line comes from response listeners these replies never get.
  reply.log.info({ req, res: reply, responseTime: reply.elapsedTime, errCode: err.code }, 'request completed')
}

/** The status and message of a `clientError`; the code is always VALIDATION_ERROR. */
function clientErrorAnswer(nodeCode: string | undefined): { status: number; message: string } {
  switch (nodeCode ?? '') {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: 'Request headers too large' }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: 'Request timeout' }
    default:
      return { status: 400, message: 'Malformed request' }
  }
}

/**
 * Fastify's `clientErrorHandler` (Node's `clientError`: unparseable request, headers too large, a
 * request or its headers not received within the timeouts). There is no request object yet, so a
 * minimal HTTP response is written on the socket by hand, then the socket is closed.
 */
export function clientErrorHandler(
  this: FastifyInstance,
  err: Error & { code?: string },
  socket: Socket,
): void {
  // A reset peer has nothing left to answer; Node has already destroyed the socket.
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const { status, message } = clientErrorAnswer(err.code)
  const id = randomUUID()
  // Why debug: slow or broken clients are routine on the internet, and a flood of them must not flood
  // the log. Why only the code: the error carries the raw bytes that failed to parse.
  this.log.debug({ reqId: id, errCode: err.code, status, ip: socket.remoteAddress }, 'client error')
  // Why the check (Node's own rule): a response whose headers are already on the wire must not be
  // corrupted by a second one; then the socket is only closed.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy()
    return
  }
  const body = JSON.stringify(errorBody('VALIDATION_ERROR', message))
  socket.write(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${id}\r\n` +
      'Cache-Control: no-store\r\n' +
      'X-Content-Type-Options: nosniff\r\n' +
      'Connection: close\r\n' +
      '\r\n' +
      body,
  )
  // Why not end() alone: the HTTP server allows half-open sockets, so a client that keeps sending would
  // keep it open. destroySoon ends our side and destroys the socket once the answer is flushed (it is
  // far smaller than any socket buffer, so flushing never waits on the client reading).
  socket.destroySoon()
}
