import { randomBytes } from 'node:crypto'
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import type { WebauthnConfig } from '../../security/auth-config.js'
import type { components } from '../../../generated/openapi.js'

// The one file that speaks WebAuthn, through @simplewebauthn/server (docs/decisions.md D25): options,
// and the verification of what a browser answers. No CBOR, COSE or signature code of our own.
// Why the library is imported on first use: it brings some 40 modules (ASN.1, X.509, a DI container) that
// cost every process ~0.2-0.6 s to load, though only tenants with passkeys on ever need them (every test
// process paid it). `npm start` loads it right after listening (preloadWebauthn), so no request waits.
// Base64url and clientDataJSON are plain Node (Buffer), as the library's own helpers do them.

let library: Promise<typeof import('@simplewebauthn/server')> | undefined

/** @simplewebauthn/server, loaded once. */
function webauthn(): Promise<typeof import('@simplewebauthn/server')> {
  library ??= import('@simplewebauthn/server')
  return library
}

/** Loads the WebAuthn library ahead of the first passkey request (the server calls it once listening). */
export function preloadWebauthn(): Promise<void> {
  return webauthn().then(() => undefined)
}

const toBase64Url = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url')
const fromBase64Url = (text: string): Uint8Array<ArrayBuffer> =>
  new Uint8Array(Buffer.from(text, 'base64url'))

type Schemas = components['schemas']
type Config = Required<WebauthnConfig>

/** How long a challenge lives (contract section 21), also given to the browser as `timeout`. */
export const CHALLENGE_MS = 5 * 60_000
/** EdDSA, ES256, RS256: what authenticators make (COSE ids). */
const ALGORITHMS = [-8, -7, -257]

/** A fresh challenge, 256 random bits, base64url. */
export function newChallenge(): string {
  return toBase64Url(randomBytes(32))
}

/** The challenge a browser's clientDataJSON carries; null when it is not one. */
export function challengeOf(clientDataJSON: string): string | null {
  try {
    const c: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')).challenge
    return typeof c === 'string' && c.length > 0 && c.length <= 256 ? c : null
  } catch {
    return null
  }
}

/** The WebAuthn user handle of a user: its id's 16 bytes, base64url (what `userHandle` returns at login). */
export function userHandleOf(userId: string): string {
  return toBase64Url(Buffer.from(userId.replaceAll('-', ''), 'hex'))
}

/** Options for navigator.credentials.create(): resident key and user verification required, no attestation. */
export async function registrationOptions(
  cfg: Config,
  user: { id: string; name: string },
  challenge: string,
  exclude: { credential_id: string; transports: string[] }[],
): Promise<Schemas['PasskeyCreationOptions']> {
  const { generateRegistrationOptions } = await webauthn()
  return generateRegistrationOptions({
    rpName: cfg.rpName,
    rpID: cfg.rpId,
    userID: Buffer.from(user.id.replaceAll('-', ''), 'hex'),
    userName: user.name,
    userDisplayName: user.name,
    challenge: fromBase64Url(challenge),
    timeout: CHALLENGE_MS,
    attestationType: 'none',
    excludeCredentials: exclude.map((c) => ({ id: c.credential_id, transports: c.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    supportedAlgorithmIDs: ALGORITHMS,
  }) as Promise<Schemas['PasskeyCreationOptions']>
}

/** Options for navigator.credentials.get(): discoverable credentials (none listed), user verification required. */
export async function loginOptions(
  cfg: Config,
  challenge: string,
): Promise<Schemas['PasskeyRequestOptions']> {
  const { generateAuthenticationOptions } = await webauthn()
  const o = await generateAuthenticationOptions({
    rpID: cfg.rpId,
    allowCredentials: [],
    challenge: fromBase64Url(challenge),
    timeout: CHALLENGE_MS,
    userVerification: 'required',
  })
  return {
    challenge: o.challenge,
    rpId: cfg.rpId,
    allowCredentials: [],
    timeout: CHALLENGE_MS,
    userVerification: 'required',
  }
}

/** What a verified registration stores; null when the answer does not verify (any reason). */
export async function verifyRegistration(
  cfg: Config,
  response: Schemas['RegistrationResponse'],
  challenge: string,
) {
  const { verifyRegistrationResponse } = await webauthn()
  try {
    const out = await verifyRegistrationResponse({
      // Why the cast: the document's schema has checked the shape; the library's type is the same JSON
      // with its enums spelled out.
      response: response as unknown as RegistrationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: cfg.origins,
      expectedRPID: cfg.rpId,
      requireUserPresence: true,
      requireUserVerification: true,
      supportedAlgorithmIDs: ALGORITHMS,
    })
    if (!out.verified) return null
    const info = out.registrationInfo
    return {
      credentialId: info.credential.id,
      publicKey: toBase64Url(info.credential.publicKey),
      counter: info.credential.counter,
      transports: response.response.transports ?? [],
      deviceType: info.credentialDeviceType,
      backedUp: info.credentialBackedUp,
    }
  } catch {
    return null
  }
}

/**
 * The new counter and backed-up flag of a verified login; null when it does not verify: a bad signature,
 * another origin or rpId, no user-verification flag, or a counter that went backwards (when non-zero).
 */
export async function verifyLogin(
  cfg: Config,
  response: Schemas['AuthenticationResponse'],
  challenge: string,
  stored: { credentialId: string; publicKey: string; counter: number; transports: string[] },
): Promise<{ counter: number; backedUp: boolean } | null> {
  const { verifyAuthenticationResponse } = await webauthn()
  try {
    const out = await verifyAuthenticationResponse({
      // Why the cast: as in verifyRegistration.
      response: response as unknown as AuthenticationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: cfg.origins,
      expectedRPID: cfg.rpId,
      requireUserVerification: true,
      credential: {
        id: stored.credentialId,
        publicKey: fromBase64Url(stored.publicKey),
        counter: stored.counter,
        transports: stored.transports,
      },
    })
    if (!out.verified) return null
    return { counter: out.authenticationInfo.newCounter, backedUp: out.authenticationInfo.credentialBackedUp }
  } catch {
    return null
  }
}
