import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'

// A software authenticator for the passkey tests, on node:crypto alone: an ES256 key pair, authenticator
// data, clientDataJSON and a 'none' attestation in CBOR, all built by hand, so a test can forge what a
// browser never sends (another origin or rpId, no UV flag, a counter gone backwards, a replayed challenge).
// Test code only: the service verifies with @simplewebauthn/server.

// --- a tiny CBOR encoder (RFC 8949): unsigned and negative integers, byte and text strings, maps ---------

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n])
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n])
  if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff])
  const b = Buffer.alloc(5)
  b[0] = (major << 5) | 26
  b.writeUInt32BE(n, 1)
  return b
}

type Cbor = number | string | Uint8Array | Map<Cbor, Cbor>

function cbor(v: Cbor): Buffer {
  if (typeof v === 'number') return v >= 0 ? head(0, v) : head(1, -1 - v)
  if (typeof v === 'string') {
    const s = Buffer.from(v, 'utf8')
    return Buffer.concat([head(3, s.length), s])
  }
  if (v instanceof Uint8Array) return Buffer.concat([head(2, v.length), Buffer.from(v)])
  const parts = [head(5, v.size)]
  for (const [k, val] of v) parts.push(cbor(k), cbor(val))
  return Buffer.concat(parts)
}

// --- WebAuthn structures -----------------------------------------------------------------------------

const b64u = (b: Uint8Array | string) => Buffer.from(b).toString('base64url')
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest()

const UP = 0x01
const UV = 0x04
const BE = 0x08
const BS = 0x10
const AT = 0x40

/** What a test may change in what the authenticator and its "browser" say. */
export interface Forge {
  origin?: string
  rpId?: string
  /** Leave the user-verification flag out. */
  noUv?: boolean
  /** The signature counter to report (default: one more than the last). */
  counter?: number
  /** Another challenge than the options' (base64url). */
  challenge?: string
  /** Sign with another key than the registered one. */
  wrongKey?: boolean
  /** The user handle to return (default: the one given at registration). */
  userHandle?: string | null
  /** clientDataJSON's `type` (default webauthn.create / webauthn.get). */
  type?: string
}

/** One discoverable ES256 credential, as a platform authenticator with user verification keeps it. */
export class SoftAuthenticator {
  readonly credentialId = randomBytes(32)
  private readonly key: { privateKey: KeyObject; publicKey: KeyObject }
  private readonly other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
  counter = 0
  userHandle: string | null = null

  constructor(
    /** The origin the "browser" writes into clientDataJSON, and the rpId whose hash it signs. */
    readonly origin: string,
    readonly rpId: string,
    /** Count signatures (false: always 0, as synced passkeys do). */
    private readonly counts = true,
  ) {
    this.key = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  }

  get id(): string {
    return b64u(this.credentialId)
  }

  private coseKey(): Buffer {
    const jwk = this.key.publicKey.export({ format: 'jwk' })
    return cbor(
      new Map<Cbor, Cbor>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, Buffer.from(jwk.x ?? '', 'base64url')],
        [-3, Buffer.from(jwk.y ?? '', 'base64url')],
      ]),
    )
  }

  private authData(f: Forge, attested: boolean, count: number): Buffer {
    const flags = UP | (f.noUv ? 0 : UV) | BE | BS | (attested ? AT : 0)
    const counter = Buffer.alloc(4)
    counter.writeUInt32BE(count)
    const parts: Buffer[] = [sha256(f.rpId ?? this.rpId), Buffer.from([flags]), counter]
    if (attested) {
      const len = Buffer.alloc(2)
      len.writeUInt16BE(this.credentialId.length)
      parts.push(Buffer.alloc(16), len, this.credentialId, this.coseKey())
    }
    return Buffer.concat(parts)
  }

  private clientData(type: string, challenge: string, f: Forge): Buffer {
    const origin = f.origin ?? this.origin
    return Buffer.from(
      JSON.stringify({
        type: f.type ?? type,
        challenge: f.challenge ?? challenge,
        origin,
        crossOrigin: false,
      }),
    )
  }

  /** navigator.credentials.create() for these options: a RegistrationResponseJSON. */
  register(options: { challenge: string; user: { id: string } }, f: Forge = {}) {
    this.userHandle = options.user.id
    const clientDataJSON = this.clientData('webauthn.create', options.challenge, f)
    const authData = this.authData(f, true, this.counts ? this.counter : 0)
    const attestationObject = cbor(
      new Map<Cbor, Cbor>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    )
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      clientExtensionResults: { credProps: { rk: true } },
      authenticatorAttachment: 'platform' as const,
      response: {
        clientDataJSON: b64u(clientDataJSON),
        attestationObject: b64u(attestationObject),
        transports: ['internal'],
      },
    }
  }

  /** navigator.credentials.get() for these options: an AuthenticationResponseJSON, signed. */
  login(options: { challenge: string }, f: Forge = {}) {
    if (this.counts && f.counter === undefined) this.counter++
    const count = f.counter ?? (this.counts ? this.counter : 0)
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, f)
    const authData = this.authData(f, false, count)
    const signed = Buffer.concat([authData, sha256(clientDataJSON)])
    const signature = sign('sha256', signed, f.wrongKey ? this.other : this.key.privateKey)
    const userHandle = f.userHandle === undefined ? this.userHandle : f.userHandle
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
      response: {
        clientDataJSON: b64u(clientDataJSON),
        authenticatorData: b64u(authData),
        signature: b64u(signature),
        ...(userHandle === null ? {} : { userHandle }),
      },
    }
  }
}
