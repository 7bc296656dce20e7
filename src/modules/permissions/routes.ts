import type { FastifyInstance } from 'fastify'
import { defineRoute } from '../../lib/route.js'
import { requestMeta } from '../audit/write.js'
import { principalOf } from '../../security/request-principal.js'
import * as grants from './user-grants.js'
import * as permissions from './service.js'

/** Permissions module: the catalogue and custom permissions (service.ts), direct grants and checks (grants.ts). */
export default async function permissionsRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  defineRoute(app, 'listPermissions', async (req) =>
    permissions.listPermissions(ctx, principalOf(req), req.query),
  )
  defineRoute(app, 'listCustomPermissions', async (req) =>
    permissions.listCustomPermissions(ctx, principalOf(req), req.query),
  )
  defineRoute(app, 'createPermission', async (req) =>
    permissions.createPermission(ctx, principalOf(req), req.body),
  )
  defineRoute(app, 'updatePermission', async (req) =>
    permissions.updatePermission(ctx, principalOf(req), req.params.id, req.body),
  )
  defineRoute(app, 'deletePermission', async (req) =>
    permissions.deletePermission(ctx, principalOf(req), req.params.id),
  )
  defineRoute(app, 'grantPermission', async (req) =>
    grants.grantPermission(ctx, principalOf(req), req.body, requestMeta(req)),
  )
  defineRoute(app, 'revokePermission', async (req) =>
    grants.revokePermission(ctx, principalOf(req), req.body, requestMeta(req)),
  )
  defineRoute(app, 'getUserPermissions', async (req) =>
    grants.getUserPermissions(ctx, principalOf(req), req.params.userId),
  )
  defineRoute(app, 'checkPermission', async (req) => grants.checkPermission(ctx, principalOf(req), req.body))
}
