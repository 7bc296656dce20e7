import type { FastifyInstance } from 'fastify'

/** tenants module routes (to be filled in by its issue). */
export default async function tenantsRoutes(_app: FastifyInstance): Promise<void> {}
