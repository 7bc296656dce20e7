import type { FastifyPluginAsync } from 'fastify'
import systemRoutes from './system/routes.js'
import authRoutes from './auth/routes.js'

/** One route plugin per interface module, registered in this order. */
export const modules: FastifyPluginAsync[] = [systemRoutes, authRoutes]
