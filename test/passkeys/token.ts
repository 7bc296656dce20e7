import type { FastifyInstance } from 'fastify'

/** The claims of an access token the app issued, as its own verifier reads them. */
export async function verifyAccessToken(app: FastifyInstance, token: string) {
  const p = await app.ctx.tokens.verify(token, app.ctx.clock.now())
  return { sub: p.kind === 'user' ? p.userId : null, auth_time: p.kind === 'user' ? p.authTime : undefined }
}
