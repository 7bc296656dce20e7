import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'

/** Sends a cacheable JSON document (5 minutes) with a strong ETag, or 304 when the client's validator matches. */
export function sendCacheable(req: FastifyRequest, reply: FastifyReply, body: object): FastifyReply {
  const etag = `"${createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 32)}"`
  reply.header('cache-control', 'public, max-age=300').header('etag', etag)
  const given = req.headers['if-none-match']
  if (typeof given === 'string' && given.split(',').some((v) => v.trim().replace(/^W\//, '') === etag)) {
    return reply.code(304).send()
  }
  return reply.code(200).send(body)
}
