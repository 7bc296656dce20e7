import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { operations } from '../../generated/openapi.js'
import { routes, type OperationId } from '../../generated/routes.js'
import type { RouteSpec } from './route-spec.js'

type Op<K extends OperationId> = operations[K]
type JsonBody<T> = T extends { requestBody?: { content: { 'application/json': infer B } } } ? B : unknown
type Part<T, P extends 'query' | 'path'> = T extends { parameters: { [k in P]?: infer Q } }
  ? [Q] extends [undefined | never]
    ? unknown
    : NonNullable<Q>
  : unknown
type DataOf<R> = R extends { content: { 'application/json': { data: infer D } } } ? D : never

/** The Fastify generic for an operation: body, query and params as the document types them. */
export interface RouteTypes<K extends OperationId> {
  Body: JsonBody<Op<K>>
  Querystring: Part<Op<K>, 'query'>
  Params: Part<Op<K>, 'path'>
}

/** The `data` of an operation's success envelope (its 200, 201 or 202 response). */
export type Data<K extends OperationId> =
  Op<K> extends { responses: infer R }
    ? R extends { 201: infer C }
      ? DataOf<C>
      : R extends { 202: infer A }
        ? DataOf<A>
        : R extends { 200: infer S }
          ? DataOf<S>
          : never
    : never

export type Req<K extends OperationId> = FastifyRequest<RouteTypes<K>>

/**
 * The schemas Fastify compiles for a route: request parts, and the success response only. Why: error
 * bodies are built by the error handler in one fixed shape, and compiling a serializer per route and
 * error status (~600 of them) costs seconds at start and tens of MB; tests check every status anyway.
 */
export function runtimeSchema(spec: RouteSpec): RouteSpec['schema'] {
  const success = spec.schema.response?.[String(spec.successStatus)]
  return { ...spec.schema, response: success ? { [spec.successStatus]: success } : undefined }
}

/** What every operation's registration takes from the route table: method, url, schemas, config. */
function tableOptions(id: OperationId, { validateQuery = true }: RawRouteOptions = {}) {
  const spec = routes[id]
  const schema = runtimeSchema(spec)
  // Why the key is left out, not set to undefined: Fastify warns about a schema part given as undefined.
  const { querystring: _unread, ...withoutQuery } = schema
  return {
    method: spec.method,
    url: spec.url,
    schema: validateQuery ? schema : withoutQuery,
    config: {
      operationId: id,
      spec,
      // Why: the sign-up operations answer CORS for their keys' own origins (src/plugins/signup-cors.ts),
      // whatever CORS_ORIGINS says, so @fastify/cors stays out of them.
      ...(spec.auth === 'publishable-key' ? { cors: false as const } : {}),
      ...(spec.rateLimit
        ? { rateLimit: { max: spec.rateLimit.max, timeWindow: spec.rateLimit.timeWindow } }
        : {}),
    },
    // Why: an optional body may be omitted entirely; validate it as the empty object it stands for.
    // Only `undefined` is "omitted" (no body, or an empty one): a JSON `null` is a body, and not an
    // object, so it fails validation like an array or a string (400).
    ...(spec.schema.body && !spec.bodyRequired
      ? {
          preValidation: (req: FastifyRequest, _reply: FastifyReply, done: () => void) => {
            if (req.body === undefined) req.body = {} as never
            done()
          },
        }
      : {}),
  }
}

/**
 * Registers one operation of the document: method, url, schemas, permission and rate-limit override all
 * come from generated/routes.ts; the handler returns the envelope's `data` only.
 */
export function defineRoute<K extends OperationId>(
  app: FastifyInstance,
  id: K,
  handler: (req: Req<K>, reply: FastifyReply) => Promise<Data<K>>,
): void {
  const spec = routes[id]
  app.route<RouteTypes<K>>({
    ...tableOptions(id),
    handler: async (req, reply) => {
      const data = await handler(req, reply)
      reply.code(spec.successStatus)
      return { success: true, data }
    },
  })
}

/** How defineRawRoute may depart from the route table. */
export interface RawRouteOptions {
  /**
   * false (default true): the query is not validated, for a handler that reads none of it and answers
   * the same whatever it holds: the mail links' pages (the console's script reads `tenant` and `token`
   * from its own address, and an incomplete or malformed link gets the page, which says so) and
   * getMetrics. `req.query` is then whatever the client sent.
   */
  readonly validateQuery?: boolean
}

/**
 * Registers an operation whose answer is not the envelope: the discovery documents (issuer metadata and
 * JWKS, read by standard JWT libraries, cacheable, 304 on a matching ETag), the mail links' pages (the
 * console's index.html), the metrics (Prometheus text). Everything but the answer comes from the route
 * table as for defineRoute (request typed from the document, schemas, gate); the handler sets status,
 * headers and body on `reply` itself.
 */
export function defineRawRoute<K extends OperationId>(
  app: FastifyInstance,
  id: K,
  handler: (req: Req<K>, reply: FastifyReply) => Promise<FastifyReply>,
  options: RawRouteOptions = {},
): void {
  app.route<RouteTypes<K>>({ ...tableOptions(id, options), handler })
}
