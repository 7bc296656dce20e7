import type { FastifyInstance } from 'fastify'

/** users module routes (to be filled in by its issue). */
export default async function usersRoutes(_app: FastifyInstance): Promise<void> {}
