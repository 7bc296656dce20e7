import type { FastifyInstance } from 'fastify'
import { defineRoute } from '../../lib/route.js'
import { requestMeta } from '../audit/write.js'
import { principalOf } from '../auth/routes.js'
import * as permissions from './service.js'

/** Permissions module: the catalogue, custom permissions, direct grants, checks. */
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
    permissions.grantPermission(ctx, principalOf(req), req.body, requestMeta(req)),
  )
  defineRoute(app, 'revokePermission', async (req) =>
    permissions.revokePermission(ctx, principalOf(req), req.body, requestMeta(req)),
  )
  defineRoute(app, 'getUserPermissions', async (req) =>
    permissions.getUserPermissions(ctx, principalOf(req), req.params.userId),
  )
  defineRoute(app, 'checkPermission', async (req) =>
    permissions.checkPermission(ctx, principalOf(req), req.body),
  )
}
