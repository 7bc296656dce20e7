import { createHash } from 'node:crypto'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import type { AppContext } from '../../context.js'
import { isDatabaseUnavailable, type OpenedDatabase } from '../../db/connect.js'
import type { Database } from '../../db/database.js'
import { migrateToLatest } from '../../db/migrate.js'
import { TenantBusyError } from '../../db/tenant-db.js'
import { AppError } from '../../errors.js'
import { decryptSecret, encryptSecret } from '../../lib/crypto-box.js'
import {
  AUDIT_TABLE,
  TENANT_TABLES,
  copyTenantRows,
  lockTenantParents,
  lockTenantRow,
  purgeTenantRows,
  upsertTenantCopy,
} from './relocate.js'
import { openRoutedDatabase } from './routed-connect.js'
import { ForbiddenAddressError, resolveAllowedAddresses } from './routing-address.js'
import { sameDatabase, storedRoutingTarget, vetRoutingUrl, type RoutingTarget } from './routing-url.js'

/** `PUT /tenants/:id/database`'s answer: where the tenant's rows live; never credentials. */
export interface TenantDatabaseInfo {
  tenantId: string
  dedicated: boolean
  host: string | null
  database: string | null
}

// Why small: every routed database gets its own pool next to the main one; many tenants multiply it.
const ROUTED_POOL_MAX = 5
// Why under 5 s: a request for a tenant whose database is down must get its 503 within 5 s (contract 11).
// Also the time every failed reachability check of a new target takes (see #reach).
const ROUTED_CONNECT_TIMEOUT_MS = 4000
// How often an instance looks for routing changes made by another one.
const SYNC_INTERVAL_MS = 3000
const SERIALIZATION_RETRIES = 3

/** The box context binding an encrypted URL to its tenant (a box copied to another row fails to open). */
const urlContext = (tenantId: string) => `tenant:${tenantId}:database-url`
const stampOf = (urlEnc: string) => createHash('sha256').update(urlEnc).digest('hex')
const isRetryable = (err: unknown) => ['40001', '40P01'].includes(String((err as { code?: unknown })?.code))
const TENANT_TABLES_WITHOUT_AUDIT = TENANT_TABLES.filter((t) => t !== AUDIT_TABLE)

interface Known {
  /** Hash of the stored encrypted URL: a new box on every change, so another instance's change shows. */
  readonly stamp: string
  /** Hash of the URL itself: tenants routed to the same URL share one pool. */
  readonly urlHash: string
}

/**
 * Per-tenant database routing of one app instance: moves a tenant's rows (connect, migrate, copy,
 * switch, clean up), restores routes at start and follows changes made by other instances. Moves,
 * deletions and syncs run one at a time.
 */
export class TenantRouting {
  readonly #known = new Map<string, Known>()
  #queue: Promise<unknown> = Promise.resolve()
  #timer: NodeJS.Timeout | undefined
  #stopped = false

  constructor(
    private readonly ctx: AppContext,
    private readonly log: FastifyBaseLogger,
  ) {}

  get #main(): Kysely<Database> {
    return this.ctx.dbs.main
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn)
    this.#queue = run.catch(() => undefined)
    return run
  }

  /** Restores every stored route (migrating those databases), then polls for other instances' changes. */
  async start(): Promise<void> {
    await this.#exclusive(() => this.#sync(true))
    this.#timer = setInterval(() => {
      this.#exclusive(() => this.#sync(false)).catch((err: unknown) => {
        // Why quiet for an unreachable main database: health reports that; this would repeat it every 3 s.
        if (isDatabaseUnavailable(err)) this.log.debug({ err }, 'tenant routing sync failed')
        else this.log.warn({ err }, 'tenant routing sync failed')
      })
    }, SYNC_INTERVAL_MS)
    this.#timer.unref()
  }

  /** Stops polling and waits for a running move or sync; the registry closes the pools. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#timer)
    await this.#queue
  }

  /** True when DATABASE_ROUTING_ALLOWED_HOSTS is unset: loopback and link-local addresses are refused. */
  get #checkAddresses(): boolean {
    return this.ctx.config.routingAllowedHosts.length === 0
  }

  #open(target: RoutingTarget): OpenedDatabase {
    const urlHash = stampOf(target.url)
    for (const [tenantId, k] of this.#known) {
      const shared = k.urlHash === urlHash ? this.ctx.dbs.routedFor(tenantId) : undefined
      if (shared) return shared
    }
    return openRoutedDatabase(target.connection, {
      poolMax: Math.min(ROUTED_POOL_MAX, this.ctx.config.databasePoolMax),
      connectionTimeoutMillis: ROUTED_CONNECT_TIMEOUT_MS,
      logger: this.log,
      checkAddresses: this.#checkAddresses,
    })
  }

  /** Closes a handle unless a routed tenant uses it. */
  async #release(handle: OpenedDatabase): Promise<void> {
    for (const tenantId of this.#known.keys()) if (this.ctx.dbs.routedFor(tenantId) === handle) return
    await handle.close()
  }

  async #sync(migrate: boolean): Promise<void> {
    if (this.#stopped) return
    const rows = await this.#main.selectFrom('tenant_databases').select(['tenant_id', 'url_enc']).execute()
    const seen = new Set<string>()
    for (const row of rows) {
      seen.add(row.tenant_id)
      const stamp = stampOf(row.url_enc)
      if (this.#known.get(row.tenant_id)?.stamp === stamp) continue
      // Why throw: a URL that no longer decrypts means SECRETS_KEY changed; serving the tenant from the
      // main database instead would answer "no such user" for every one of them.
      const url = decryptSecret(row.url_enc, this.ctx.secretsKey, urlContext(row.tenant_id))
      const opened = this.#open(storedRoutingTarget(url))
      if (migrate) {
        // Why not fatal: one unreachable tenant database must not keep the service from starting; its
        // requests answer 503 until it is back.
        await migrateToLatest(opened.db).catch((err: unknown) =>
          this.log.warn({ err, tenantId: row.tenant_id }, 'migrating a routed tenant database failed'),
        )
      }
      if (this.#stopped) return void (await this.#release(opened))
      // Why under the barrier: the former pool closes once unused; queries running on it finish first.
      await this.ctx.dbs
        .exclusive(row.tenant_id, () => this.ctx.dbs.route(row.tenant_id, opened))
        .catch(async (err: unknown) => {
          await this.#release(opened)
          throw err
        })
      this.#known.set(row.tenant_id, { stamp, urlHash: stampOf(url) })
    }
    for (const tenantId of [...this.#known.keys()]) {
      if (seen.has(tenantId)) continue
      await this.ctx.dbs.exclusive(tenantId, () => this.ctx.dbs.unroute(tenantId))
      this.#known.delete(tenantId)
    }
  }

  /** The tenant's routing as the API shows it (host and database name only). */
  async info(tenantId: string): Promise<TenantDatabaseInfo> {
    const row = await this.#main
      .selectFrom('tenant_databases')
      .select(['host', 'database_name'])
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst()
    return { tenantId, dedicated: !!row, host: row?.host ?? null, database: row?.database_name ?? null }
  }

  /**
   * Moves the tenant's rows to the database at `url` (or back to the main one for null): connect,
   * migrate, copy, switch, then remove them from the former store. Any failure leaves routing as it
   * was (DATABASE_ROUTING_FAILED); an unreachable main database is SERVICE_UNAVAILABLE.
   */
  setDatabase(tenantId: string, url: string | null): Promise<TenantDatabaseInfo> {
    const target = url === null ? null : vetRoutingUrl(url, this.ctx.config.routingAllowedHosts)
    return this.#exclusive(() => this.#move(tenantId, target))
  }

  async #storedTarget(tenantId: string): Promise<RoutingTarget | null> {
    const row = await this.#main
      .selectFrom('tenant_databases')
      .select('url_enc')
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst()
    if (!row) return null
    return storedRoutingTarget(decryptSecret(row.url_enc, this.ctx.secretsKey, urlContext(tenantId)))
  }

  async #move(tenantId: string, target: RoutingTarget | null): Promise<TenantDatabaseInfo> {
    const former = this.ctx.dbs.routedFor(tenantId)
    const formerTarget = await this.#storedTarget(tenantId)
    if (target === null && !former) {
      if (formerTarget) await this.#persist(this.#main, tenantId, null)
      return this.info(tenantId)
    }
    let opened: OpenedDatabase | undefined
    if (target) {
      opened = await this.#reach(target)
      const handle = opened
      await this.#step(
        'Applying the migrations to the target database failed',
        () => migrateToLatest(handle.db),
        handle,
      )
      if (former && formerTarget && sameDatabase(formerTarget, target)) {
        // Same database, new credentials: nothing to copy; queries running on the former pool finish first.
        await this.ctx.dbs
          .exclusive(tenantId, async () => {
            await this.#persist(this.#main, tenantId, target)
            await this.ctx.dbs.route(tenantId, handle)
          })
          .catch((err: unknown) => this.#moveFailed(err, tenantId, handle))
        return this.info(tenantId)
      }
    }
    const src = former?.db ?? this.#main
    const dst = opened?.db ?? this.#main
    const switched = opened
    // Why under the barrier: a write that took the tenant's handle before the switch would otherwise land
    // in the store being left after its rows were copied (and be lost), and a read just after the copy
    // would find them gone. Copying under it keeps the copy complete; the tenant's requests wait
    // meanwhile (503 past the barrier's wait).
    await this.ctx.dbs
      .exclusive(tenantId, async () => {
        for (let attempt = 1; ; attempt++) {
          try {
            await this.#relocate(tenantId, src, !former, dst, target)
            break
          } catch (err) {
            if (attempt < SERIALIZATION_RETRIES && isRetryable(err)) continue
            throw err
          }
        }
        // Why before the switch: switching closes the former pool when no other tenant uses it.
        await this.#sweepAudit(tenantId, src, dst)
        if (switched) await this.ctx.dbs.route(tenantId, switched)
        else await this.ctx.dbs.unroute(tenantId)
      })
      .catch((err: unknown) => this.#moveFailed(err, tenantId, opened))
    return this.info(tenantId)
  }

  /** Closes the unused target and turns a failed switch into its answer; routing is unchanged. */
  async #moveFailed(err: unknown, tenantId: string, opened: OpenedDatabase | undefined): Promise<never> {
    if (opened) await this.#release(opened)
    if (err instanceof AppError) throw err
    if (err instanceof TenantBusyError)
      throw new AppError('DATABASE_ROUTING_FAILED', 'The tenant’s running requests did not finish in time')
    if (isDatabaseUnavailable(err) && !(await this.#answers(this.#main))) throw err
    this.log.warn({ err, tenantId }, 'tenant relocation failed; routing unchanged')
    throw new AppError('DATABASE_ROUTING_FAILED', 'Copying the tenant to the target database failed')
  }

  /**
   * Opens the target and checks that it answers. With DATABASE_ROUTING_ALLOWED_HOSTS unset, a host with
   * a loopback, link-local or unspecified address is refused at once (its connections would be refused
   * too, address by address). Every other failure (no such host, closed port, something else listening,
   * wrong credentials, no such database) answers the same, and only once the connect timeout has passed
   * since the attempt began, so neither the answer nor its timing tells an open port from a closed one.
   */
  async #reach(target: RoutingTarget): Promise<OpenedDatabase> {
    const began = performance.now()
    if (this.#checkAddresses) {
      try {
        await resolveAllowedAddresses(target.host)
      } catch (err) {
        if (err instanceof ForbiddenAddressError)
          throw new AppError(
            'DATABASE_ROUTING_FAILED',
            'The database host resolves to a loopback, link-local or unspecified address',
          )
        // A name that does not resolve is one more unreachable target, answered below like the others.
      }
    }
    const opened = this.#open(target)
    try {
      await opened.ping()
      return opened
    } catch (err) {
      await this.#release(opened)
      this.log.warn({ err }, 'The target database is unreachable')
      const left = began + ROUTED_CONNECT_TIMEOUT_MS - performance.now()
      if (left > 0) await new Promise((r) => setTimeout(r, left))
      throw new AppError('DATABASE_ROUTING_FAILED', 'The target database is unreachable')
    }
  }

  async #answers(db: Kysely<Database>): Promise<boolean> {
    try {
      await db.selectFrom('tenants').select('id').limit(1).execute()
      return true
    } catch {
      return false
    }
  }

  /** Runs one preparation step against the target; a failure closes it and is DATABASE_ROUTING_FAILED. */
  async #step(message: string, fn: () => Promise<unknown>, handle: OpenedDatabase): Promise<void> {
    try {
      await fn()
    } catch (err) {
      await this.#release(handle)
      this.log.warn({ err }, message)
      throw new AppError('DATABASE_ROUTING_FAILED', message)
    }
  }

  /** Stores (or removes) the tenant's route in the main database and remembers it as seen. */
  async #persist(db: Kysely<Database>, tenantId: string, target: RoutingTarget | null): Promise<void> {
    if (target === null) {
      await db.deleteFrom('tenant_databases').where('tenant_id', '=', tenantId).execute()
      this.#known.delete(tenantId)
      return
    }
    const urlEnc = encryptSecret(target.url, this.ctx.secretsKey, urlContext(tenantId))
    const now = new Date(this.ctx.clock.now())
    await db
      .insertInto('tenant_databases')
      .values({ tenant_id: tenantId, url_enc: urlEnc, host: target.host, database_name: target.database })
      .onConflict((oc) =>
        oc.column('tenant_id').doUpdateSet({
          url_enc: urlEnc,
          host: target.host,
          database_name: target.database,
          updated_at: now,
        }),
      )
      .execute()
    this.#known.set(tenantId, { stamp: stampOf(urlEnc), urlHash: stampOf(target.url) })
  }

  /**
   * One relocation attempt. The source transaction (repeatable read) locks the tenant row and the rows
   * new writes would reference, so concurrent inserts wait and concurrent updates or deletes of copied
   * rows make this attempt fail rather than be lost. The target commits first; the route is persisted
   * before the source rows go. Returns once the source transaction has ended.
   */
  async #relocate(
    tenantId: string,
    src: Kysely<Database>,
    srcIsMain: boolean,
    dst: Kysely<Database>,
    target: RoutingTarget | null,
  ): Promise<void> {
    const dstIsMain = target === null
    let copied = false
    let persistedOutside = false
    try {
      await src
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute(async (s) => {
          const tenantRow = await lockTenantRow(s, tenantId)
          if (!tenantRow) throw new AppError('TENANT_NOT_FOUND')
          await lockTenantParents(s, tenantId)
          await dst.transaction().execute(async (d) => {
            // Why nowait: when the target is really the source database under another name, the row is
            // locked by the source transaction and waiting would deadlock.
            await lockTenantRow(d, tenantId, !dstIsMain).catch((err: unknown) => {
              throw (err as { code?: unknown }).code === '55P03'
                ? new AppError('DATABASE_ROUTING_FAILED', 'The target is the database the tenant is in')
                : err
            })
            // Rows of this tenant in the target are leftovers of an earlier move: the source is the truth.
            await purgeTenantRows(d, tenantId)
            if (!dstIsMain) await upsertTenantCopy(d, { ...tenantRow, metadata: {} })
            await copyTenantRows(s, d, tenantId)
          })
          copied = true
          await this.#persist(srcIsMain ? s : this.#main, tenantId, target)
          persistedOutside = !srcIsMain
          await purgeTenantRows(s, tenantId, { tenantRow: !srcIsMain })
        })
    } catch (err) {
      if (persistedOutside) {
        // The route already points at the target, which holds every row: the move stands, with
        // leftovers in the former database (purged by a later move back there).
        this.log.warn({ err, tenantId }, 'removing the moved rows from the former database failed')
        return
      }
      // Why: a route persisted inside the rolled-back source transaction never happened.
      if (srcIsMain) this.#known.delete(tenantId)
      if (copied) {
        await dst
          .transaction()
          .execute((d) => purgeTenantRows(d, tenantId))
          .catch((e: unknown) =>
            this.log.warn({ err: e, tenantId }, 'cleaning the target after a failed move failed'),
          )
      }
      throw err
    }
  }

  /**
   * Audit rows are written without touching the locked rows, so some may land in the source after the
   * copy's snapshot: move them too. Best effort; a failure is logged.
   */
  async #sweepAudit(tenantId: string, src: Kysely<Database>, dst: Kysely<Database>): Promise<void> {
    try {
      await src.transaction().execute(async (s) => {
        const counts = await copyTenantRows(s, dst, tenantId, {
          tables: [AUDIT_TABLE],
          ignoreConflicts: true,
        })
        if ((counts[AUDIT_TABLE.name] ?? 0) > 0) await purgeTenantRows(s, tenantId, { tables: [AUDIT_TABLE] })
      })
    } catch (err) {
      this.log.warn({ err, tenantId }, 'moving late audit rows after a relocation failed')
    }
  }

  /**
   * Deletes a tenant everywhere: its audit rows are brought home to the main database first (they
   * outlive the tenant), then the tenant row goes (cascading to every row the main database holds),
   * then its routed copy. Returns false when the tenant did not exist.
   */
  deleteTenant(tenantId: string): Promise<boolean> {
    return this.#exclusive(async () => {
      const routed = this.ctx.dbs.routedFor(tenantId)
      if (routed) {
        await copyTenantRows(routed.db, this.#main, tenantId, {
          tables: [AUDIT_TABLE],
          ignoreConflicts: true,
        })
      }
      const deleted = await this.#main.transaction().execute(async (trx) => {
        // Why explicit: tenant-scoped tables are reached without a foreign key to tenants in a routed
        // database, and usage rows have none at all.
        await purgeTenantRows(trx, tenantId, { tables: TENANT_TABLES_WITHOUT_AUDIT })
        await trx.deleteFrom('client_key_usage').where('tenant_id', '=', tenantId).execute()
        const r = await trx.deleteFrom('tenants').where('id', '=', tenantId).executeTakeFirst()
        return Number(r.numDeletedRows) > 0
      })
      if (routed) {
        this.#known.delete(tenantId)
        await routed.db
          .transaction()
          .execute((trx) => purgeTenantRows(trx, tenantId, { tenantRow: true }))
          .catch((err: unknown) =>
            this.log.warn({ err, tenantId }, 'removing a deleted tenant’s routed rows failed'),
          )
        await this.ctx.dbs.unroute(tenantId)
      }
      return deleted
    })
  }
}

const instances = new WeakMap<AppContext, TenantRouting>()

/** The routing of this app instance (created by startTenantRouting). */
export function routingOf(ctx: AppContext): TenantRouting {
  const r = instances.get(ctx)
  if (!r) throw new Error('tenant routing not started')
  return r
}

/** Restores the stored tenant routes at start and keeps following them until the app closes. */
export async function startTenantRouting(app: FastifyInstance): Promise<void> {
  const routing = new TenantRouting(app.ctx, app.log)
  instances.set(app.ctx, routing)
  await routing.start()
  app.addHook('preClose', () => routing.stop())
}
