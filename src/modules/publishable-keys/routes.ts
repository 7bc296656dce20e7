import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Counter } from 'prom-client'
import type { SignupKey } from '../../context.js'
import { AppError } from '../../errors.js'
import { defineRoute } from '../../lib/route.js'
import { principalOf } from '../../security/request-principal.js'
import { requestMeta } from '../audit/write.js'
import * as keys from './service.js'
import { getSignupChallenge, signup } from './signup.js'
import { onlyTheSolutionIsWrong } from './challenge.js'

/** The publishable key the gate verified for a sign-up operation. */
export function signupKeyOf(req: FastifyRequest): SignupKey {
  if (!req.signupKey) throw new AppError('UNAUTHORIZED')
  return req.signupKey
}

/** The `result` label of tessera_signups_total for a POST /signup answer. */
function resultOf(status: number): string {
  if (status === 201) return 'created'
  const byStatus: Record<number, string> = {
    400: 'invalid',
    401: 'unauthorized',
    403: 'forbidden',
    409: 'conflict',
    429: 'rate_limited',
  }
  return byStatus[status] ?? 'error'
}

/** Publishable Keys module: the keys' management, and sign-up straight from a browser (contract section 20). */
export default async function publishableKeysRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  const signups = new Counter({
    name: 'tessera_signups_total',
    help: 'POST /signup answers by result: created, invalid (proof of work or input), unauthorized, forbidden, conflict, rate_limited, error.',
    labelNames: ['result'] as const,
    registers: [app.metricsRegistry],
  })
  signups.inc({ result: 'created' }, 0)
  // Why a hook here: it sees this module's routes only, and refusals of the gate (401, 403, 429) too.
  app.addHook('onResponse', (req, reply, done) => {
    if (req.routeOptions.config?.operationId === 'signup') signups.inc({ result: resultOf(reply.statusCode) })
    done()
  })

  // Why before the schema: the gate (key, Origin, budget) runs first; then a missing or malformed proof in
  // an otherwise valid body is INVALID_CHALLENGE like a wrong one.
  app.addHook('preValidation', async (req) => {
    if (req.routeOptions.config?.operationId !== 'signup') return
    const validBody = req.getValidationFunction('body')
    if (validBody && onlyTheSolutionIsWrong(req.body, (b) => Boolean(validBody(b))))
      throw new AppError('INVALID_CHALLENGE')
  })

  defineRoute(app, 'listPublishableKeys', async (req) =>
    keys.listPublishableKeys(ctx, principalOf(req), req.query),
  )
  defineRoute(app, 'createPublishableKey', async (req) =>
    keys.createPublishableKey(ctx, principalOf(req), req.body),
  )
  defineRoute(app, 'getPublishableKey', async (req) =>
    keys.getPublishableKey(ctx, principalOf(req), req.params.id),
  )
  defineRoute(app, 'updatePublishableKey', async (req) =>
    keys.updatePublishableKey(ctx, principalOf(req), req.params.id, req.body),
  )
  defineRoute(app, 'revokePublishableKey', async (req) =>
    keys.revokePublishableKey(ctx, principalOf(req), req.params.id),
  )
  defineRoute(app, 'getSignupChallenge', async (req) => getSignupChallenge(ctx, signupKeyOf(req)))
  defineRoute(app, 'signup', async (req) =>
    signup(ctx, signupKeyOf(req), req.body, { ...requestMeta(req), clientIp: req.ip }),
  )
}
