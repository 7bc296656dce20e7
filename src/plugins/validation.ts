import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Ajv, type Options, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
// The copy Fastify's own compiler uses: package.json asks for the same major, and `npm ls fast-json-stringify`
// shows one copy. Why it matters: answers must serialize as they did under Fastify's default compiler.
import fastJsonStringify from 'fast-json-stringify'

// Why: ajv-formats is CommonJS; under NodeNext its function is the `default` property.
const addFormats = addFormatsModule.default

function makeAjv(opts: Options): Ajv {
  // addUsedSchema off, as in Fastify's own Ajv: a schema with an $id is not registered by it, so a second app's
  // copy of such a schema could never clash with the first's in these shared instances.
  const ajv = new Ajv({ strict: false, allErrors: true, useDefaults: true, addUsedSchema: false, ...opts })
  addFormats(ajv)
  return ajv
}

// One Ajv per HTTP part, and one serializer per response schema, for every app of the process. Why shared: the
// schemas are the generated route table's own objects, the same for every app, and compiling them is most of
// building an app. A process builds one app in production, but a test process builds dozens, each paying
// about 0.2 s of CPU for the same functions (2026-11-29: an app's build 0.59 s of CPU against 0.40 s).
// Ajv keeps what it compiled by schema object; the serializers are kept the same way. So a route's schemas must
// be objects that outlive the app (the route table's), not literals made anew at each build.
const strict = makeAjv({ removeAdditional: false, coerceTypes: false })
const coercing = makeAjv({ removeAdditional: false, coerceTypes: 'array' })
const serializers = new WeakMap<object, (data: unknown) => string>()

/**
 * fast-json-stringify as Fastify's default compiler calls it here: the app adds no shared schemas (addSchema) and
 * sets no serializerOpts, both of which this compiler would ignore.
 */
function serializerFor(schema: object): (data: unknown) => string {
  let serialize = serializers.get(schema)
  if (!serialize) {
    serialize = fastJsonStringify(schema, { schema: {} })
    serializers.set(schema, serialize)
  }
  return serialize
}

/** A validator compiled at its first call; Fastify reads `errors` off the function it was given. */
function lazyValidator(ajv: Ajv, schema: object) {
  let compiled: ValidateFunction | undefined
  const validate = Object.assign(
    (data: unknown) => {
      compiled ??= ajv.compile(schema)
      const ok = compiled(data)
      validate.errors = compiled.errors
      return ok
    },
    { errors: null as ValidateFunction['errors'] },
  )
  return validate
}

/**
 * Bodies are validated strictly (unknown properties rejected, no type coercion); querystring and params are
 * coerced from their string form. Responses are serialized from their schema. Both are compiled when a route
 * first needs them. Why: the document has 142 operations, and compiling every one at start held about
 * 14 MB more of resident memory (121 → 136 MB idle between 2026-11-29 and 2026-12-03) for routes a deployment
 * may never call; a route's first call pays its own compile once.
 */
async function validationPlugin(app: FastifyInstance): Promise<void> {
  app.setValidatorCompiler(({ schema, httpPart }) =>
    lazyValidator(httpPart === 'body' ? strict : coercing, schema),
  )
  app.setSerializerCompiler(({ schema }) => {
    let serialize: ((data: unknown) => string) | undefined
    return (data: unknown) => (serialize ??= serializerFor(schema))(data)
  })
}

export default fp(validationPlugin, { name: 'validation' })
