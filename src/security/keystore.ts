import type { KeyObject } from 'node:crypto'
import { decryptSecret } from '../lib/crypto-box.js'
import type { Clock } from '../lib/clock.js'
import { TtlCache } from '../lib/ttl-cache.js'
import { asObject } from '../lib/json-object.js'
import type { SigningLookup } from './lookups.js'
import {
  openPrivateKey,
  publicKeyOf,
  type AsymmetricAlgorithm,
  type PublishedJwk,
  type SigningAlgorithm,
} from './asymmetric.js'

/** The kid of the service default signing secret (JWT_SECRET or the generated one). */
export const DEFAULT_KID = 'default'

/** The crypto-box context of a tenant's stored secrets: a box copied to another tenant fails to open. */
export const jwtSecretContext = (tenantId: string) => `tenant:${tenantId}:jwt-secret`

/** The key new tokens of a tenant are signed with: an HS256 secret, or an asymmetric private key. */
export type SigningKey =
  | { readonly alg: 'HS256'; readonly kid: string; readonly secret: Buffer }
  | { readonly alg: AsymmetricAlgorithm; readonly kid: string; readonly privateKey: KeyObject }

/** A key that verifies: the HS256 secret, or the public key (and its PublishedJwk) of an asymmetric pair. */
export type VerificationKey =
  | { readonly alg: 'HS256'; readonly secret: Buffer }
  | { readonly alg: AsymmetricAlgorithm; readonly publicKey: KeyObject; readonly jwk: PublishedJwk }

type Accepted = VerificationKey & { readonly until: number | null }

/** The OpenID provider's RS256 keys of a tenant: the current private key and every public key honoured. */
export interface OidcKeys {
  readonly current: { readonly kid: string; readonly privateKey: KeyObject } | null
  /** Current first; a retired one until its 7 days end. */
  readonly published: readonly { readonly jwk: PublishedJwk; readonly until: number | null }[]
}

interface TenantKeys {
  readonly oidc: OidcKeys
  readonly current: SigningKey
  /** kid → key and the instant (ms) it stops being honoured (null: current, no end). */
  readonly accepted: ReadonlyMap<string, Accepted>
}

/** The part of `tenants.metadata.jwtSecret` the keystore reads (written by the secret endpoints). */
interface SecretMeta {
  defaultRetiredUntil?: string | null
  previous?: { kid: string; expiresAt: string } | null
}

/** `tenants.metadata.signing`: the HS256 secret still honoured after a switch to an asymmetric algorithm. */
interface SigningMeta {
  previousSecret?: { kid: string; expiresAt: string } | null
}

function asMeta(v: unknown): { jwtSecret?: SecretMeta; signing?: SigningMeta } {
  return asObject(v) as { jwtSecret?: SecretMeta; signing?: SigningMeta }
}

/** The tenant's signing algorithm as its stored auth_config says (HS256 when unset). */
function algorithmOf(authConfig: unknown): SigningAlgorithm {
  const alg = asObject(authConfig).signingAlgorithm
  return alg === 'EdDSA' || alg === 'ES256' ? alg : 'HS256'
}

// Why: a rotation made on another instance must be seen within 5 s (docs/decisions.md D1).
const TTL_MS = 2000

/**
 * Signing and verification secrets per tenant: the tenant's current secret (or the service default),
 * plus retired ones for their 7-day overlap. The key is always chosen by the claimed tenant, so one
 * tenant's secret can never verify a token that claims another tenant.
 */
export class Keystore {
  private readonly cache = new TtlCache<string, TenantKeys>(TTL_MS)

  constructor(
    private readonly rows: SigningLookup,
    private readonly defaultSecret: Buffer,
    private readonly secretsKey: Buffer,
    private readonly clock: Clock,
    /** PUBLIC_URL: the base of each asymmetric tenant's issuer. */
    private readonly publicUrl = 'http://127.0.0.1:3000',
  ) {}

  /** The `iss` of an asymmetric tenant's tokens: `{PUBLIC_URL}/t/{tenantCode}`. */
  issuer(tenantCode: string): string {
    return `${this.publicUrl}/t/${tenantCode}`
  }

  private async load(tenantId: string): Promise<TenantKeys> {
    // Why the tenant row once: both the secrets' overlap and the algorithm's come from it.
    const tenant = await this.rows.tenant(tenantId)
    const [hs, pairs] = await Promise.all([
      this.loadSecrets(tenantId, tenant?.metadata),
      this.rows.keyPairs(tenantId),
    ])
    const accepted = new Map<string, Accepted>()
    let currentPair: SigningKey | null = null
    const oidc = this.oidcOf(tenantId, pairs)
    for (const r of pairs) {
      if (r.purpose === 'oidc' || r.algorithm === 'RS256') continue
      const jwk = asObject(r.public_jwk) as unknown as PublishedJwk
      const until = r.retired_at === null ? null : r.expires_at ? new Date(r.expires_at).getTime() : 0
      const alg = r.algorithm
      accepted.set(r.kid, { alg, publicKey: publicKeyOf(jwk), jwk, until })
      if (r.retired_at === null) {
        const privateKey = openPrivateKey(r.private_key_enc, this.secretsKey, tenantId, r.kid)
        currentPair = { alg, kid: r.kid, privateKey }
      }
    }
    const alg = algorithmOf(tenant?.auth_config)
    if (alg === 'HS256' || currentPair === null) {
      // HS256 (or an asymmetric switch whose key is not written yet): the secrets, plus a key pair retired
      // by a switch back to HS256 for what is left of its 7 days.
      for (const [kid, k] of hs.accepted) accepted.set(kid, k)
      for (const [kid, k] of [...accepted]) if (k.alg !== 'HS256' && k.until === null) accepted.delete(kid)
      return { current: hs.current, accepted, oidc }
    }
    // Asymmetric: the current and previous key pairs, plus the HS256 secret a switch retired, for 7 days.
    const previousSecret = asMeta(tenant?.metadata).signing?.previousSecret
    const retired = previousSecret ? hs.accepted.get(previousSecret.kid) : undefined
    if (previousSecret && retired) {
      accepted.set(previousSecret.kid, { ...retired, until: Date.parse(previousSecret.expiresAt) })
    }
    return { current: currentPair, accepted, oidc }
  }

  /** The RS256 rows of the tenant as OidcKeys (the private key opened for the current one only). */
  private oidcOf(tenantId: string, pairs: Awaited<ReturnType<SigningLookup['keyPairs']>>): OidcKeys {
    let current: OidcKeys['current'] = null
    const published: { jwk: PublishedJwk; until: number | null }[] = []
    for (const r of pairs) {
      if (r.purpose !== 'oidc') continue
      const jwk = asObject(r.public_jwk) as unknown as PublishedJwk
      if (r.retired_at === null) {
        current = {
          kid: r.kid,
          privateKey: openPrivateKey(r.private_key_enc, this.secretsKey, tenantId, r.kid),
        }
        published.unshift({ jwk, until: null })
      } else if (r.expires_at) published.push({ jwk, until: new Date(r.expires_at).getTime() })
    }
    return { current, published }
  }

  /** The tenant's OpenID provider keys (RS256), from the same 2-second cache. */
  async oidcKeys(tenantId: string): Promise<OidcKeys> {
    const keys = await this.cache.get(tenantId, () => this.load(tenantId))
    const now = this.clock.now()
    return {
      current: keys.oidc.current,
      published: keys.oidc.published.filter((k) => k.until === null || k.until > now),
    }
  }

  /** The tenant's HS256 secrets: the current one (or the service default) and the one it replaced. */
  private async loadSecrets(tenantId: string, metadata: unknown): Promise<Omit<TenantKeys, 'oidc'>> {
    const rows = await this.rows.secrets(tenantId)
    const accepted = new Map<string, Accepted>()
    let current: SigningKey | null = null
    for (const r of rows) {
      const secret = Buffer.from(
        decryptSecret(r.secret_enc, this.secretsKey, jwtSecretContext(tenantId)),
        'utf8',
      )
      if (r.retired_at === null) {
        current = { alg: 'HS256', kid: r.kid, secret }
        accepted.set(r.kid, { alg: 'HS256', secret, until: null })
      } else if (r.expires_at) {
        accepted.set(r.kid, { alg: 'HS256', secret, until: new Date(r.expires_at).getTime() })
      }
    }
    const meta = asMeta(metadata).jwtSecret
    if (current === null) {
      current = { alg: 'HS256', kid: DEFAULT_KID, secret: this.defaultSecret }
      accepted.set(DEFAULT_KID, { alg: 'HS256', secret: this.defaultSecret, until: null })
    } else if (meta?.defaultRetiredUntil && meta.previous?.kid === DEFAULT_KID) {
      accepted.set(DEFAULT_KID, {
        alg: 'HS256',
        secret: this.defaultSecret,
        until: Date.parse(meta.defaultRetiredUntil),
      })
    }
    // Why: only the current secret and the one previous secret are honoured. Rotations delete older
    // rows, and this keeps a retired row that outlived its place (written before that rule) from counting.
    for (const kid of [...accepted.keys()]) {
      if (kid !== current.kid && kid !== meta?.previous?.kid) accepted.delete(kid)
    }
    return { current, accepted }
  }

  /** The key new tokens of this tenant are signed with. */
  async signingKey(tenantId: string): Promise<SigningKey> {
    return (await this.cache.get(tenantId, () => this.load(tenantId))).current
  }

  /** The key for `kid` within this tenant, or null when unknown or past its overlap. */
  async verificationKey(tenantId: string, kid: string): Promise<VerificationKey | null> {
    const keys = await this.cache.get(tenantId, () => this.load(tenantId))
    const k = keys.accepted.get(kid)
    if (!k) return null
    return k.until === null || k.until > this.clock.now() ? k : null
  }

  /**
   * The tenant's public keys still honoured (current first), for its PublishedJwkS; empty for an HS256 tenant
   * whose former key pair has expired. Served from the 2-second cache: no query per request once warm.
   */
  async publicKeys(tenantId: string): Promise<PublishedJwk[]> {
    const keys = await this.cache.get(tenantId, () => this.load(tenantId))
    const now = this.clock.now()
    const out: PublishedJwk[] = []
    for (const [kid, k] of keys.accepted) {
      if (k.alg === 'HS256' || (k.until !== null && k.until <= now)) continue
      if (kid === keys.current.kid) out.unshift(k.jwk)
      else out.push(k.jwk)
    }
    // The OpenID provider's RSA keys too (contract section 23): an HS256 tenant's set holds only these.
    for (const k of keys.oidc.published) if (k.until === null || k.until > now) out.push(k.jwk)
    return out
  }

  /** The current key (its kid, algorithm and public PublishedJwk) and the one still honoured beside it, if any. */
  async state(tenantId: string): Promise<{
    kid: string
    algorithm: SigningAlgorithm
    publicJwk: PublishedJwk | null
    previous: { kid: string; expiresAt: string } | null
  }> {
    const keys = await this.cache.get(tenantId, () => this.load(tenantId))
    const now = this.clock.now()
    const current = keys.accepted.get(keys.current.kid)
    let previous: { kid: string; expiresAt: string } | null = null
    for (const [kid, k] of keys.accepted) {
      if (kid === keys.current.kid || k.until === null || k.until <= now) continue
      if (!previous || k.until > Date.parse(previous.expiresAt)) {
        previous = { kid, expiresAt: new Date(k.until).toISOString() }
      }
    }
    return {
      kid: keys.current.kid,
      algorithm: keys.current.alg,
      publicJwk: current && current.alg !== 'HS256' ? current.jwk : null,
      previous,
    }
  }

  /** The OpenID provider's key as GET /tenants/me/signing-keys shows it, or null before it is made. */
  async oidcState(tenantId: string): Promise<{
    kid: string
    algorithm: 'RS256'
    publicJwk: PublishedJwk
    previous: { kid: string; expiresAt: string } | null
  } | null> {
    const { published } = await this.oidcKeys(tenantId)
    const [current, older] = published
    if (!current || current.until !== null) return null
    return {
      kid: current.jwk.kid,
      algorithm: 'RS256',
      publicJwk: current.jwk,
      previous: older?.until ? { kid: older.jwk.kid, expiresAt: new Date(older.until).toISOString() } : null,
    }
  }

  /** Forgets a tenant's keys after a rotation (every tenant's when no id: the change channel had a gap). */
  invalidate(tenantId?: string): void {
    this.cache.delete(tenantId)
  }
}
