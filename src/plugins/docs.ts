import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import document from '../../generated/openapi.json' with { type: 'json' }

/** Serves the checked-in document as is: /docs (explorer), /docs/json, /docs/yaml. */
async function docsPlugin(app: FastifyInstance): Promise<void> {
  await app.register(swagger, { mode: 'static', specification: { document: document as never } })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    uiConfig: { deepLinking: true, persistAuthorization: true, tryItOutEnabled: true },
  })
}

export default fp(docsPlugin, { name: 'docs' })
