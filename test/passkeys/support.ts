import type { FastifyInstance } from 'fastify'
import { call, type As } from '../helpers/call.js'
import { createTenant, type TenantFx, type UserFx } from '../helpers/fixtures.js'
import { SoftAuthenticator } from './soft-authenticator.js'

// Shared by the passkey tests: a tenant with passkeys on, and a passkey registered through the API.

export const ORIGIN = 'https://app.acme.test'
export const RP_ID = 'acme.test'

/** A tenant with `webauthn` set (rpId acme.test, origin https://app.acme.test), plus any other config. */
export function passkeyTenant(app: FastifyInstance, extra: Record<string, unknown> = {}): Promise<TenantFx> {
  return createTenant(app, { webauthn: { rpId: RP_ID, rpName: 'Acme', origins: [ORIGIN] }, ...extra })
}

/** Registers a new software passkey for the user whose credential is `cred`; throws unless 201. */
export async function enroll(app: FastifyInstance, cred: As, counts = true) {
  const auth = new SoftAuthenticator(ORIGIN, RP_ID, counts)
  const options = await call(app, 'getPasskeyRegistrationOptions', cred)
  if (options.status !== 200) throw new Error(`options: ${options.raw}`)
  const res = await call(app, 'registerMyPasskey', cred, {
    body: { name: 'Laptop', response: auth.register(options.data) },
  })
  if (res.status !== 201) throw new Error(`register: ${res.raw}`)
  return { auth, passkey: res.data }
}

/** A login with the authenticator: options, then the signed answer (`forge` changes what it says). */
export async function passkeyLogin(
  app: FastifyInstance,
  tenant: TenantFx,
  auth: SoftAuthenticator,
  opts: { ip?: string; forge?: Parameters<SoftAuthenticator['login']>[1] } = {},
) {
  const options = await call(
    app,
    'getPasskeyLoginOptions',
    { ip: opts.ip },
    { body: { tenantCode: tenant.code } },
  )
  if (options.status !== 200) throw new Error(`login options: ${options.raw}`)
  const response = auth.login(options.data, opts.forge)
  return {
    res: await call(
      app,
      'loginWithPasskey',
      { ip: opts.ip },
      { body: { tenantCode: tenant.code, response } },
    ),
    options: options.data,
    response,
  }
}

export type { UserFx }
