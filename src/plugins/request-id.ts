import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { IncomingMessage } from 'node:http'
import fp from 'fastify-plugin'

const VALID_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Echoes a well-formed incoming X-Request-Id, otherwise makes a new one (used as Fastify's genReqId). */
export function genReqId(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id']
  return typeof incoming === 'string' && VALID_ID.test(incoming) ? incoming : randomUUID()
}

async function requestIdPlugin(app: FastifyInstance): Promise<void> {
  // Why: onRequest runs before anything can fail, so even a 404 or a 429 carries the id.
  // A callback hook: an async one costs a promise per request for work that never waits.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id)
    done()
  })
}

export default fp(requestIdPlugin, { name: 'request-id' })
