import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { decryptSecret } from '../lib/crypto-box.js'
import type { Clock } from '../lib/clock.js'
import { TtlCache } from '../lib/ttl-cache.js'

/** The kid of the service default signing secret (JWT_SECRET or the generated one). */
export const DEFAULT_KID = 'default'

/** The crypto-box context of a tenant's stored secrets: a box copied to another tenant fails to open. */
export const jwtSecretContext = (tenantId: string) => `tenant:${tenantId}:jwt-secret`

export interface SigningKey {
  readonly kid: string
  readonly secret: Buffer
}

interface TenantKeys {
  readonly current: SigningKey
  /** kid → secret and the instant (ms) it stops being honoured (null: current, no end). */
  readonly accepted: ReadonlyMap<string, { secret: Buffer; until: number | null }>
}

/** The part of `tenants.metadata.jwtSecret` the keystore reads (written by the secret endpoints). */
interface SecretMeta {
  defaultRetiredUntil?: string | null
  previous?: { kid: string; expiresAt: string } | null
}

function asMeta(v: unknown): { jwtSecret?: SecretMeta } {
  const o: unknown = typeof v === 'string' ? JSON.parse(v) : v
  return typeof o === 'object' && o !== null ? (o as { jwtSecret?: SecretMeta }) : {}
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
    private readonly db: Kysely<Database>,
    private readonly defaultSecret: Buffer,
    private readonly secretsKey: Buffer,
    private readonly clock: Clock,
  ) {}

  private async load(tenantId: string): Promise<TenantKeys> {
    const [rows, tenant] = await Promise.all([
      this.db
        .selectFrom('tenant_secrets')
        .select(['kid', 'secret_enc', 'retired_at', 'expires_at'])
        .where('tenant_id', '=', tenantId)
        .execute(),
      this.db.selectFrom('tenants').select('metadata').where('id', '=', tenantId).executeTakeFirst(),
    ])
    const accepted = new Map<string, { secret: Buffer; until: number | null }>()
    let current: SigningKey | null = null
    for (const r of rows) {
      const secret = Buffer.from(
        decryptSecret(r.secret_enc, this.secretsKey, jwtSecretContext(tenantId)),
        'utf8',
      )
      if (r.retired_at === null) {
        current = { kid: r.kid, secret }
        accepted.set(r.kid, { secret, until: null })
      } else if (r.expires_at) {
        accepted.set(r.kid, { secret, until: new Date(r.expires_at).getTime() })
      }
    }
    const meta = asMeta(tenant?.metadata).jwtSecret
    if (current === null) {
      current = { kid: DEFAULT_KID, secret: this.defaultSecret }
      accepted.set(DEFAULT_KID, { secret: this.defaultSecret, until: null })
    } else if (meta?.defaultRetiredUntil && meta.previous?.kid === DEFAULT_KID) {
      accepted.set(DEFAULT_KID, {
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

  /** The secret for `kid` within this tenant, or null when unknown or past its overlap. */
  async verificationKey(tenantId: string, kid: string): Promise<Buffer | null> {
    const keys = await this.cache.get(tenantId, () => this.load(tenantId))
    const k = keys.accepted.get(kid)
    if (!k) return null
    return k.until === null || k.until > this.clock.now() ? k.secret : null
  }

  /** Forgets a tenant's keys after a local rotation. */
  invalidate(tenantId: string): void {
    this.cache.delete(tenantId)
  }
}
