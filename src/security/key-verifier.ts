import { AppError } from '../errors.js'
import { compileAllowlist } from '../lib/cidr.js'
import type { Clock } from '../lib/clock.js'
import { sha256Hex } from '../lib/tokens.js'
import { TtlCache } from '../lib/ttl-cache.js'
import type { KeyLookup } from './lookups.js'
import { credentialPermissions, type KeyPrincipal } from './principal.js'

interface KeyRecord {
  readonly id: string
  readonly tenantId: string
  readonly tenantCode: string
  readonly tenantActive: boolean
  readonly active: boolean
  readonly expiresAt: number | null
  /** Set when the value matched is the rotated-out one: it works until then. */
  readonly graceUntil: number | null
  readonly scopes: ReadonlySet<string>
  readonly ipAllowed: ((ip: string) => boolean) | null
  readonly origins: ReadonlySet<string> | null
  readonly behalfUserId: string | null
  readonly behindUserIds: readonly string[]
}

// Why: a revocation on another instance must bite within 5 s (revokeClientKey; docs/decisions.md D1);
// locally it is immediate.
const TTL_MS = 2000

const asList = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : [])

/** Verifies Client Key values: hash lookup (cached briefly), status, expiry, IP and origin allowlists. */
export class KeyVerifier {
  private readonly cache = new TtlCache<string, KeyRecord | null>(TTL_MS, 50_000)

  constructor(
    private readonly findKey: KeyLookup,
    private readonly platformCode: string,
    private readonly clock: Clock,
  ) {}

  private async load(hash: string): Promise<KeyRecord | null> {
    const row = await this.findKey(hash)
    if (!row) return null
    const ips = asList(row.ip_allowlist)
    const origins = asList(row.origin_allowlist)
    const isPrevious = row.key_hash !== hash
    return {
      id: row.id,
      tenantId: row.tenant_id,
      tenantCode: row.tenant_code,
      tenantActive: row.tenant_status === 'ACTIVE',
      active: row.status === 'ACTIVE',
      expiresAt: row.expires_at ? new Date(row.expires_at).getTime() : null,
      graceUntil: isPrevious
        ? row.previous_key_expires_at
          ? new Date(row.previous_key_expires_at).getTime()
          : 0
        : null,
      scopes: credentialPermissions(asList(row.scopes), row.tenant_code === this.platformCode),
      ipAllowed: ips.length ? compileAllowlist(ips) : null,
      origins: origins.length ? new Set(origins) : null,
      behalfUserId: row.behalf_user_id,
      behindUserIds: asList(row.behind_user_ids),
    }
  }

  /** Returns the key's principal or throws UNAUTHORIZED / IP_NOT_ALLOWED / ORIGIN_NOT_ALLOWED. */
  async verify(value: string, ip: string, origin: string | undefined): Promise<KeyPrincipal> {
    const hash = sha256Hex(value)
    const rec = await this.cache.get(hash, () => this.load(hash))
    const now = this.clock.now()
    if (!rec || !rec.active || !rec.tenantActive) throw new AppError('UNAUTHORIZED', 'Invalid client key')
    if (rec.expiresAt !== null && rec.expiresAt <= now)
      throw new AppError('UNAUTHORIZED', 'Client key expired')
    if (rec.graceUntil !== null && rec.graceUntil <= now)
      throw new AppError('UNAUTHORIZED', 'Invalid client key')
    // The key is known: its refusals carry it, so the key's usage log records the request.
    const keyRef = { tenantId: rec.tenantId, keyId: rec.id }
    if (rec.ipAllowed && !rec.ipAllowed(ip)) throw Object.assign(new AppError('IP_NOT_ALLOWED'), { keyRef })
    if (rec.origins && origin !== undefined && !rec.origins.has(origin)) {
      throw Object.assign(new AppError('ORIGIN_NOT_ALLOWED'), { keyRef })
    }
    return {
      kind: 'client_key',
      keyId: rec.id,
      tenantId: rec.tenantId,
      tenantCode: rec.tenantCode,
      isPlatform: rec.tenantCode === this.platformCode,
      permissions: rec.scopes,
      behalfUserId: rec.behalfUserId,
      behindUserIds: rec.behindUserIds,
    }
  }

  /** Forgets cached lookups (all of them: revocation must be immediate on this instance). */
  invalidate(): void {
    this.cache.delete()
  }
}
