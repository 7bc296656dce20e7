import type { Kysely } from 'kysely'
import type { PublishableKeys, SignupKey } from '../../context.js'
import type { Database } from '../../db/database.js'
import { AppError } from '../../errors.js'
import { TtlCache } from '../../lib/ttl-cache.js'
import { anyActiveKeyAllows, findKeyByValue } from './queries.js'

/** The form of a key value; anything else is refused without a lookup. */
export const PUBLISHABLE_KEY_SHAPE = /^pk_[A-Za-z0-9_-]{43,125}$/

interface KeyRecord extends SignupKey {
  readonly usable: boolean
  readonly origins: ReadonlySet<string>
}

// Why: a revocation or an edit made on another instance must bite within 5 s even when the change
// channel is down (as for Client Keys, docs/decisions.md D1); locally invalidate() makes it immediate.
const TTL_MS = 2000

const asList = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : [])

/**
 * Publishable keys by value (cached briefly, unknown values too, so a flood of made-up keys costs one
 * lookup each per TTL at most), and the origins some active key allows, for preflights.
 */
export class PublishableKeyVerifier implements PublishableKeys {
  private readonly keys = new TtlCache<string, KeyRecord | null>(TTL_MS, 50_000)
  private readonly origins = new TtlCache<string, boolean>(TTL_MS, 10_000)

  constructor(private readonly db: Kysely<Database>) {}

  private async load(value: string): Promise<KeyRecord | null> {
    const row = await findKeyByValue(this.db, value)
    if (!row) return null
    return {
      id: row.id,
      tenantId: row.tenant_id,
      tenantCode: row.tenant_code,
      defaultRoles: asList(row.default_roles),
      signupsPerHour: row.signups_per_hour,
      usable: row.status === 'ACTIVE' && row.tenant_status === 'ACTIVE',
      origins: new Set(asList(row.allowed_origins)),
    }
  }

  private async record(value: unknown): Promise<KeyRecord | null> {
    if (typeof value !== 'string' || !PUBLISHABLE_KEY_SHAPE.test(value)) return null
    const rec = await this.keys.get(value, () => this.load(value))
    return rec?.usable ? rec : null
  }

  async verify(value: unknown, origin: unknown): Promise<SignupKey> {
    const rec = await this.record(value)
    if (!rec) throw new AppError('UNAUTHORIZED', 'Missing, unknown or revoked publishable key')
    // Why refuse a missing Origin: browsers always send one on these requests; a server signs users up
    // with a Client Key instead, so a request without one is not a browser's and is not admitted.
    if (typeof origin !== 'string' || !rec.origins.has(origin)) throw new AppError('ORIGIN_NOT_ALLOWED')
    return {
      id: rec.id,
      tenantId: rec.tenantId,
      tenantCode: rec.tenantCode,
      defaultRoles: rec.defaultRoles,
      signupsPerHour: rec.signupsPerHour,
    }
  }

  async originAllowed(origin: string, value: unknown): Promise<boolean> {
    if (value !== undefined) return (await this.record(value))?.origins.has(origin) ?? false
    if (origin.length > 2048) return false
    return this.origins.get(origin, () => anyActiveKeyAllows(this.db, origin))
  }

  invalidate(): void {
    this.keys.delete()
    this.origins.delete()
  }
}
