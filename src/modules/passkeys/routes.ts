import type { FastifyInstance } from 'fastify'
import { defineRoute } from '../../lib/route.js'
import { principalOf, userOf } from '../../security/request-principal.js'
import { requestMeta } from '../audit/write.js'
import { getPasskeyLoginOptions, loginWithPasskey } from './login.js'
import {
  deleteMyPasskey,
  deleteUserPasskey,
  getPasskeyRegistrationOptions,
  listMyPasskeys,
  listUserPasskeys,
  registerMyPasskey,
  renameMyPasskey,
} from './service.js'

/** Passkeys module: a user's passkeys under /me and /users/{userId}, and the passkey login (openapi/paths/passkeys.yaml). */
export default async function passkeysRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  defineRoute(app, 'getPasskeyRegistrationOptions', async (req) =>
    getPasskeyRegistrationOptions(ctx, userOf(req)),
  )
  defineRoute(app, 'registerMyPasskey', async (req) =>
    registerMyPasskey(ctx, userOf(req), req.body, requestMeta(req)),
  )
  defineRoute(app, 'listMyPasskeys', async (req) => listMyPasskeys(ctx, userOf(req), req.query))
  defineRoute(app, 'renameMyPasskey', async (req) =>
    renameMyPasskey(ctx, userOf(req), req.params.id, req.body.name),
  )
  defineRoute(app, 'deleteMyPasskey', async (req) =>
    deleteMyPasskey(ctx, userOf(req), req.params.id, requestMeta(req)),
  )
  defineRoute(app, 'listUserPasskeys', async (req) =>
    listUserPasskeys(ctx, principalOf(req), req.params.userId, req.query),
  )
  defineRoute(app, 'deleteUserPasskey', async (req) =>
    deleteUserPasskey(ctx, principalOf(req), req.params.userId, req.params.id, requestMeta(req)),
  )
  defineRoute(app, 'getPasskeyLoginOptions', async (req) =>
    getPasskeyLoginOptions(ctx, req.body, requestMeta(req)),
  )
  defineRoute(app, 'loginWithPasskey', async (req) => loginWithPasskey(ctx, req.body, requestMeta(req)))
}
