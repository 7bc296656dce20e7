import type { FastifyInstance } from 'fastify'

/** permissions module routes (to be filled in by its issue). */
export default async function permissionsRoutes(_app: FastifyInstance): Promise<void> {}
