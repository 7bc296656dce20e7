import type { FastifyInstance } from 'fastify'
import { defineRoute } from '../../lib/route.js'
import { requestMeta } from '../audit/write.js'
import { principalOf } from '../../security/request-principal.js'
import * as assignments from './assignments.js'
import * as roles from './service.js'

/** Roles module: role CRUD, role permissions, assignment to users. */
export default async function rolesRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app
  defineRoute(app, 'listRoles', async (req) => roles.listRoles(ctx, principalOf(req), req.query))
  defineRoute(app, 'getRole', async (req) => roles.getRole(ctx, principalOf(req), req.params.id))
  defineRoute(app, 'getRolePermissions', async (req) =>
    roles.getRolePermissions(ctx, principalOf(req), req.params.id),
  )
  defineRoute(app, 'createRole', async (req) => roles.createRole(ctx, principalOf(req), req.body))
  defineRoute(app, 'updateRole', async (req) =>
    roles.updateRole(ctx, principalOf(req), req.params.id, req.body),
  )
  defineRoute(app, 'deleteRole', async (req) => roles.deleteRole(ctx, principalOf(req), req.params.id))
  defineRoute(app, 'addRolePermissions', async (req) =>
    roles.addRolePermissions(ctx, principalOf(req), req.params.id, req.body.permissions),
  )
  defineRoute(app, 'removeRolePermissions', async (req) =>
    roles.removeRolePermissions(ctx, principalOf(req), req.params.id, req.body.permissions),
  )
  defineRoute(app, 'assignRole', async (req) =>
    assignments.assignRole(ctx, principalOf(req), req.body, requestMeta(req)),
  )
  defineRoute(app, 'removeRole', async (req) =>
    assignments.removeRole(ctx, principalOf(req), req.body, requestMeta(req)),
  )
}
