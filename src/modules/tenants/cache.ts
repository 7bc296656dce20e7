import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import type { TenantInfo, Tenants } from '../../context.js'
import { TtlCache } from '../../lib/ttl-cache.js'
import { resolveAuthConfig } from '../../security/auth-config.js'
import { findTenantByCode, findTenantById } from './queries.js'

// Why: a status change or config edit made on another instance must apply within 5 s (docs/decisions.md D1).
const TTL_MS = 2000

/** Tenants by id and by code, cached briefly; `invalidate` after any local change. */
export class TenantCache implements Tenants {
  private readonly byIdCache = new TtlCache<string, TenantInfo | null>(TTL_MS)
  private readonly codeToId = new TtlCache<string, string | null>(TTL_MS)

  constructor(
    private readonly db: Kysely<Database>,
    private readonly platformCode: string,
  ) {}

  private toInfo(row: {
    id: string
    code: string
    name: string
    status: string
    auth_config: unknown
  }): TenantInfo {
    return {
      id: row.id,
      code: row.code,
      name: row.name,
      status: row.status === 'INACTIVE' ? 'INACTIVE' : 'ACTIVE',
      authConfig: resolveAuthConfig(row.auth_config),
      isPlatform: row.code === this.platformCode,
    }
  }

  /** The tenant with this id, or null. */
  byId(id: string): Promise<TenantInfo | null> {
    return this.byIdCache.get(id, async () => {
      const row = await findTenantById(this.db, id)
      return row ? this.toInfo(row) : null
    })
  }

  /** The tenant with this code (case-insensitive), or null. */
  async byCode(code: string): Promise<TenantInfo | null> {
    const lower = code.toLowerCase()
    const id = await this.codeToId.get(lower, async () => {
      const row = await findTenantByCode(this.db, lower)
      return row ? row.id : null
    })
    if (id === null) {
      // Why: never cache a miss; a tenant created a moment ago must be usable at once.
      this.codeToId.delete(lower)
      return null
    }
    return this.byId(id)
  }

  /** Drops a tenant from the cache after a local change. */
  invalidate(id?: string): void {
    this.byIdCache.delete(id)
    if (id === undefined) this.codeToId.delete()
  }
}
