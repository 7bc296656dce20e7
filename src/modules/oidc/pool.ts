import { LRUCache } from 'lru-cache'
import type { AppContext, TenantInfo } from '../../context.js'
import { ensureOidcKey } from '../tenants/signing-keys.js'
import { createProvider, type Provider } from './library.js'

// One oidc-provider instance per ACTIVE tenant (its issuer, keys and clients belong to the instance), kept
// in a bounded LRU pool, with a short negative cache for codes that name no ACTIVE tenant, as Logto does.
// An instance is dropped when its tenant's row, keys or clients change, on every instance: the change
// channel (section 14) reaches each one's pool through ctx.onChange.

/** A pooled provider and the tenant it serves. */
export interface PooledProvider {
  readonly provider: Provider
  readonly tenant: TenantInfo
}

const DEFAULT_MAX = 200
// Why 5 s: a tenant created or turned ACTIVE on another instance is seen as soon as the tenant cache is.
const UNKNOWN_TTL_MS = 5_000

/** The pool of one instance. */
export class ProviderPool {
  private readonly live: LRUCache<string, Promise<PooledProvider>>
  private readonly unknown = new LRUCache<string, true>({ max: 10_000, ttl: UNKNOWN_TTL_MS })
  /** tenant id → code, to drop by the id a change names. */
  private readonly codes = new Map<string, string>()

  constructor(
    private readonly ctx: AppContext,
    max = DEFAULT_MAX,
  ) {
    this.live = new LRUCache({ max, dispose: (_v, code) => this.forgetCode(code) })
    ctx.onChange((m) => {
      for (const id of [m.tenant, m.signing, m.oauthClients]) if (id) this.drop(id === '*' ? undefined : id)
    })
  }

  /** The provider of an ACTIVE tenant's code (any case), or null. */
  async get(code: string): Promise<PooledProvider | null> {
    const key = code.toLowerCase()
    if (this.unknown.has(key)) return null
    const pooled = this.live.get(key)
    if (pooled) return pooled
    const tenant = await this.ctx.tenants.byCode(key)
    if (!tenant || tenant.status !== 'ACTIVE') {
      this.unknown.set(key, true)
      return null
    }
    const made = this.make(tenant)
    this.live.set(key, made)
    this.codes.set(tenant.id, key)
    // Why: a failed build (the database down) must not stay pooled as a rejected promise.
    made.catch(() => this.live.delete(key))
    return made
  }

  private async make(tenant: TenantInfo): Promise<PooledProvider> {
    await ensureOidcKey(this.ctx, tenant.id)
    return { provider: await createProvider(this.ctx, tenant), tenant }
  }

  /** Drops a tenant's provider (every one without an id) and the negative cache. */
  drop(tenantId?: string): void {
    this.unknown.clear()
    if (tenantId === undefined) {
      this.live.clear()
      return
    }
    const code = this.codes.get(tenantId)
    if (code) this.live.delete(code)
  }

  private forgetCode(code: string): void {
    for (const [id, c] of this.codes) if (c === code) this.codes.delete(id)
  }
}
