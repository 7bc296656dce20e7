import type { FastifyInstance } from 'fastify'

/** client-keys module routes (to be filled in by its issue). */
export default async function clientKeysRoutes(_app: FastifyInstance): Promise<void> {}
