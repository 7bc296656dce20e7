import type { FastifyInstance } from 'fastify'

/** roles module routes (to be filled in by its issue). */
export default async function rolesRoutes(_app: FastifyInstance): Promise<void> {}
