import type { FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'
import type { Principal, UserPrincipal } from './principal.js'

/** The gate sets the principal on every non-public route; this narrows it for the handler. */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new AppError('UNAUTHORIZED')
  return req.principal
}

/** A JWT-only route's principal (the gate already refused Client Keys there). */
export function userOf(req: FastifyRequest): UserPrincipal {
  const p = principalOf(req)
  if (p.kind !== 'user') throw new AppError('UNAUTHORIZED', 'This endpoint requires a user access token')
  return p
}
