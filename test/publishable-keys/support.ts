import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { call, type As, type BodyOf } from '../helpers/call.js'
import { createTenant, userWithToken, type TenantFx } from '../helpers/fixtures.js'

// Helpers of the publishable-key tests: a tenant with an administrator and a key, the sign-up caller's
// headers, and a solver of the ALTCHA challenge (the widget's work, done here with node:crypto).

export const ORIGIN = 'https://signup.example.test'
export const OTHER_ORIGIN = 'https://elsewhere.example.test'

/** The environment of the tests' apps: an easy proof of work, so each solve takes a few milliseconds. */
export const PK_ENV = { SIGNUP_CHALLENGE_MAX_NUMBER: '2000' }

/** A challenge as GET /signup/challenge gives it. */
export interface Challenge {
  algorithm: string
  challenge: string
  salt: string
  maxnumber?: number
  signature: string
}

/** Solves a challenge by brute force, as the widget does, and returns the widget's `altcha` payload. */
export function solve(c: Challenge): string {
  for (let n = 0; n <= (c.maxnumber ?? 1e6); n++) {
    if (
      createHash('sha256')
        .update(c.salt + String(n))
        .digest('hex') === c.challenge
    ) {
      const payload = {
        algorithm: c.algorithm,
        challenge: c.challenge,
        number: n,
        salt: c.salt,
        signature: c.signature,
      }
      return Buffer.from(JSON.stringify(payload)).toString('base64')
    }
  }
  throw new Error('challenge has no solution')
}

/** The caller of a sign-up operation: the key's header and a browser's Origin (and a client address). */
export function pk(key: string, origin: string | null = ORIGIN, ip?: string): As {
  return {
    headers: { 'x-publishable-key': key, ...(origin === null ? {} : { origin }) },
    ...(ip === undefined ? {} : { ip }),
  }
}

/** A fresh tenant, an administrator of it, and a publishable key made by that administrator. */
export async function tenantWithKey(
  app: FastifyInstance,
  body: Partial<BodyOf<'createPublishableKey'>> = {},
  authConfig: Record<string, unknown> = {},
) {
  const tenant = await createTenant(app, authConfig)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const res = await call(app, 'createPublishableKey', admin.cred, {
    body: { name: 'Sign-up page', allowedOrigins: [ORIGIN], ...body },
  })
  if (res.status !== 201) throw new Error(`createPublishableKey: ${res.status} ${res.raw}`)
  return { tenant, admin, key: res.data }
}

/** A solved challenge of the key, ready for POST /signup's `altcha`. */
export async function solvedChallenge(app: FastifyInstance, key: string, origin = ORIGIN): Promise<string> {
  const res = await call(app, 'getSignupChallenge', pk(key, origin))
  if (res.status !== 200) throw new Error(`getSignupChallenge: ${res.status} ${res.raw}`)
  return solve(res.data)
}

/** Signs one user up with the key: a fresh challenge, solved, then POST /signup. */
export async function signupWith(
  app: FastifyInstance,
  key: string,
  body: Omit<BodyOf<'signup'>, 'altcha'>,
  as: As = pk(key),
) {
  const altcha = await solvedChallenge(app, key)
  return call(app, 'signup', as, { body: { ...body, altcha } as BodyOf<'signup'> })
}

export type { TenantFx }
