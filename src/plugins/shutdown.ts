import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { errorBody } from './errors.js'

/**
 * While the app closes, requests that arrive on kept-alive connections get the 503 envelope with
 * `Connection: close`; requests already received finish normally (Fastify waits for them).
 */
async function shutdownPlugin(app: FastifyInstance): Promise<void> {
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  app.addHook('onRequest', async (_req, reply) => {
    if (!closing) return
    reply.header('connection', 'close')
    return reply.code(503).send(errorBody('SERVICE_UNAVAILABLE', 'Service is shutting down'))
  })
}

export default fp(shutdownPlugin, { name: 'shutdown' })
