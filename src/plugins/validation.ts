import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Ajv, type Options } from 'ajv'
import addFormatsModule from 'ajv-formats'

// Why: ajv-formats is CommonJS; under NodeNext its function is the `default` property.
const addFormats = addFormatsModule.default

function makeAjv(opts: Options): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, useDefaults: true, ...opts })
  addFormats(ajv)
  return ajv
}

/**
 * One Ajv per HTTP part: bodies are validated strictly (unknown properties rejected, no type coercion),
 * querystring and params are coerced from their string form.
 */
async function validationPlugin(app: FastifyInstance): Promise<void> {
  const strict = makeAjv({ removeAdditional: false, coerceTypes: false })
  const coercing = makeAjv({ removeAdditional: false, coerceTypes: 'array' })
  app.setValidatorCompiler(({ schema, httpPart }) =>
    httpPart === 'body' ? strict.compile(schema) : coercing.compile(schema),
  )
}

export default fp(validationPlugin, { name: 'validation' })
