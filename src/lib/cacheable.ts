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

/** The bounds a document's own freshness is held to: re-read at least daily, never more than once a minute. */
const MIN_FRESH_MS = 60_000
const MAX_FRESH_MS = 24 * 3600_000

/**
 * How long a fetched document may be kept, in ms, by its `Cache-Control` (RFC 9111): 0 for `no-store`,
 * `no-cache` or `max-age=0`; `max-age` (`s-maxage` is a shared cache's) held within a minute and a day;
 * `fallbackMs` when the response says nothing.
 */
export function freshnessMs(cacheControl: string | null, fallbackMs: number): number {
  if (!cacheControl) return fallbackMs
  const directives = cacheControl
    .toLowerCase()
    .split(',')
    .map((d) => d.trim())
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return 0
  const maxAge = directives.find((d) => d.startsWith('max-age='))
  if (!maxAge) return fallbackMs
  const seconds = Number(maxAge.slice('max-age='.length).replace(/"/g, ''))
  if (!Number.isFinite(seconds) || seconds < 0) return fallbackMs
  if (seconds === 0) return 0
  return Math.min(MAX_FRESH_MS, Math.max(MIN_FRESH_MS, seconds * 1000))
}
