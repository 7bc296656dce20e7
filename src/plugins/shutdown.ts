import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { errorBody } from './errors.js'

/**
 * While the app closes: requests already received finish normally but their responses carry
 * `Connection: close`; requests arriving on kept-alive connections get the 503 envelope, also with
 * `Connection: close`; idle kept-alive sockets are closed at once. So the listener's close never waits
 * on a client's keep-alive and the process exits well within SHUTDOWN_TIMEOUT_MS.
 */
async function shutdownPlugin(app: FastifyInstance): Promise<void> {
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
    app.server.closeIdleConnections?.()
  })
  // Callback hooks: these run on every request and almost never have anything to do.
  app.addHook('onRequest', (_req, reply, done) => {
    if (!closing) return done()
    reply.header('connection', 'close')
    reply.code(503).send(errorBody('SERVICE_UNAVAILABLE', 'Service is shutting down'))
  })
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })
  app.addHook('onResponse', (_req, _reply, done) => {
    if (closing) app.server.closeIdleConnections?.()
    done()
  })
}

export default fp(shutdownPlugin, { name: 'shutdown' })
