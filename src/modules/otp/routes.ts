import type { FastifyInstance } from 'fastify'
import { defineRoute } from '../../lib/route.js'
import { userOf } from '../../security/request-principal.js'
import { requestMeta } from '../audit/write.js'
import { setupLoginOtp, verifyLoginOtp } from './login-step.js'
import { confirmMyOtp, disableMyOtp, getMyOtp, renewMyRecoveryCodes, setupMyOtp } from './service.js'

/** Second-factor module: enrollment under /me/otp and the second step of a login (openapi/paths/otp.yaml). */
export default async function otpRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  defineRoute(app, 'getMyOtp', async (req) => getMyOtp(ctx, userOf(req)))
  defineRoute(app, 'setupMyOtp', async (req) => setupMyOtp(ctx, userOf(req)))
  defineRoute(app, 'confirmMyOtp', async (req) =>
    confirmMyOtp(ctx, userOf(req), req.body.code, requestMeta(req)),
  )
  defineRoute(app, 'renewMyRecoveryCodes', async (req) =>
    renewMyRecoveryCodes(ctx, userOf(req), req.body.code, requestMeta(req)),
  )
  defineRoute(app, 'disableMyOtp', async (req) =>
    disableMyOtp(ctx, userOf(req), req.body.code, requestMeta(req)),
  )
  defineRoute(app, 'verifyLoginOtp', async (req) => verifyLoginOtp(ctx, req.body, requestMeta(req)))
  defineRoute(app, 'setupLoginOtp', async (req) => setupLoginOtp(ctx, req.body, requestMeta(req)))
}
