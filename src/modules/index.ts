import type { FastifyPluginAsync } from 'fastify'
import systemRoutes from './system/routes.js'
import authRoutes from './authentication/routes.js'
import usersRoutes from './users/routes.js'
import rolesRoutes from './roles/routes.js'
import permissionsRoutes from './permissions/routes.js'
import tenantsRoutes from './tenants/routes.js'
import clientKeysRoutes from './client-keys/routes.js'
import accountRoutes from './account/routes.js'
import otpRoutes from './otp/routes.js'
import discoveryRoutes from './discovery/routes.js'
import emailRoutes from './email/routes.js'
import publishableKeysRoutes from './publishable-keys/routes.js'
import passkeysRoutes from './passkeys/routes.js'
import oauthClientsRoutes from './oauth-clients/routes.js'
import oidcRoutes from './oidc/routes.js'
import identityProvidersRoutes from './identity-providers/routes.js'
import federationRoutes from './federation/routes.js'

/** One route plugin per module (a tag of the document), registered in this order. */
export const modules: FastifyPluginAsync[] = [
  systemRoutes,
  authRoutes,
  accountRoutes,
  otpRoutes,
  passkeysRoutes,
  usersRoutes,
  rolesRoutes,
  permissionsRoutes,
  tenantsRoutes,
  clientKeysRoutes,
  discoveryRoutes,
  emailRoutes,
  publishableKeysRoutes,
  oauthClientsRoutes,
  oidcRoutes,
  identityProvidersRoutes,
  federationRoutes,
]
