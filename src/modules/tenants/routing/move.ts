import type { Kysely } from 'kysely'
import { isDatabaseUnavailable, type OpenedDatabase } from '../../../db/connect.js'
import type { Database } from '../../../db/database.js'
import { migrateToLatest } from '../../../db/migrate.js'
import { TenantBusyError } from '../../../db/tenant-db.js'
import { AppError } from '../../../errors.js'
import { ForbiddenAddressError, resolveAllowedAddresses } from './address.js'
import {
  AUDIT_TABLE,
  answers,
  copyTenantRows,
  deleteTenantFromMain,
  lockTenantParents,
  lockTenantRow,
  markRelocated,
  purgeTenantRows,
  transactionStart,
  upsertTenantCopy,
} from './queries.js'
import { ROUTED_CONNECT_TIMEOUT_MS, type RouteSync, type RoutingDeps } from './sync.js'
import { sameDatabase, type RoutingTarget } from './url.js'

const SERIALIZATION_RETRIES = 3
/**
 * How far before the copy's snapshot the late-audit-row copy looks back: a row the snapshot missed was
 * written by a transaction that started before it and committed after, and requests end within seconds.
 */
const LATE_AUDIT_MS = 60 * 60_000

const isRetryable = (err: unknown) => ['40001', '40P01'].includes(String((err as { code?: unknown })?.code))

/**
 * The relocation engine: moves a tenant's rows to another database (connect, migrate, copy, switch,
 * clean up) and deletes a tenant everywhere. Not serialised itself: TenantRouting runs its calls one at
 * a time, together with the syncs.
 */
export class TenantMover {
  constructor(
    private readonly deps: RoutingDeps,
    private readonly routes: RouteSync,
  ) {}

  get #main(): Kysely<Database> {
    return this.deps.dbs.main
  }

  /**
   * Moves the tenant's rows to `target` (or back to the main database for null). Any failure leaves
   * routing as it was (DATABASE_ROUTING_FAILED); an unreachable main database is SERVICE_UNAVAILABLE.
   */
  async move(tenantId: string, target: RoutingTarget | null): Promise<void> {
    const { dbs } = this.deps
    const former = dbs.routedFor(tenantId)
    const formerTarget = await this.routes.storedTarget(tenantId)
    if (target === null && !former) {
      if (formerTarget) await this.routes.persist(this.#main, tenantId, null)
      return
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
        await dbs
          .exclusive(tenantId, async () => {
            await this.routes.persist(this.#main, tenantId, target)
            await dbs.route(tenantId, handle)
          })
          .catch((err: unknown) => this.#moveFailed(err, tenantId, handle))
        return
      }
    }
    const src = former?.db ?? this.#main
    const dst = opened?.db ?? this.#main
    const switched = opened
    let copiedAt: Date | undefined
    // Why under the barrier: a write that took the tenant's handle before the switch would otherwise land
    // in the store being left after its rows were copied (and be lost), and a read just after the copy
    // would find them gone. Copying under it keeps the copy complete; the tenant's requests wait
    // meanwhile (503 past the barrier's wait).
    await dbs
      .exclusive(tenantId, async () => {
        for (let attempt = 1; ; attempt++) {
          try {
            copiedAt = await this.#relocate(tenantId, src, !former, dst, target)
            break
          } catch (err) {
            if (attempt < SERIALIZATION_RETRIES && isRetryable(err)) continue
            throw err
          }
        }
        // Why before the switch: switching closes the former pool when no other tenant uses it.
        if (copiedAt) await this.#sweepAudit(tenantId, src, dst, copiedAt)
        if (switched) await dbs.route(tenantId, switched)
        else await dbs.unroute(tenantId)
      })
      .catch((err: unknown) => this.#moveFailed(err, tenantId, opened))
  }

  /** Closes the unused target and turns a failed switch into its answer; routing is unchanged. */
  async #moveFailed(err: unknown, tenantId: string, opened: OpenedDatabase | undefined): Promise<never> {
    if (opened) await this.routes.release(opened)
    if (err instanceof AppError) throw err
    if (err instanceof TenantBusyError)
      throw new AppError('DATABASE_ROUTING_FAILED', 'The tenant’s running requests did not finish in time')
    if (isDatabaseUnavailable(err) && !(await answers(this.#main))) throw err
    this.deps.log.warn({ err, tenantId }, 'tenant relocation failed; routing unchanged')
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
    if (this.routes.checkAddresses) {
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
    const opened = this.routes.open(target)
    try {
      await opened.ping()
      return opened
    } catch (err) {
      await this.routes.release(opened)
      this.deps.log.warn({ err }, 'The target database is unreachable')
      const left = began + ROUTED_CONNECT_TIMEOUT_MS - performance.now()
      if (left > 0) await new Promise((r) => setTimeout(r, left))
      throw new AppError('DATABASE_ROUTING_FAILED', 'The target database is unreachable')
    }
  }

  /** Runs one preparation step against the target; a failure closes it and is DATABASE_ROUTING_FAILED. */
  async #step(message: string, fn: () => Promise<unknown>, handle: OpenedDatabase): Promise<void> {
    try {
      await fn()
    } catch (err) {
      await this.routes.release(handle)
      this.deps.log.warn({ err }, message)
      throw new AppError('DATABASE_ROUTING_FAILED', message)
    }
  }

  /**
   * One relocation attempt. The source transaction (repeatable read) locks the tenant row and the rows
   * new writes would reference, so concurrent inserts wait and concurrent updates or deletes of copied
   * rows make this attempt fail rather than be lost. The target commits first; the route is persisted
   * before the source rows go (audit rows stay, marked as relocated). Returns once the source transaction
   * has ended, with its start by the source database's clock (undefined when the move stood with
   * leftovers).
   */
  async #relocate(
    tenantId: string,
    src: Kysely<Database>,
    srcIsMain: boolean,
    dst: Kysely<Database>,
    target: RoutingTarget | null,
  ): Promise<Date | undefined> {
    const dstIsMain = target === null
    let copied = false
    let persistedOutside = false
    try {
      return await src
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute(async (s) => {
          const started = await transactionStart(s)
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
            // Audit rows among them stay, and the copy skips the ones the target holds already.
            await purgeTenantRows(d, tenantId)
            if (!dstIsMain) await upsertTenantCopy(d, { ...tenantRow, metadata: {} })
            await copyTenantRows(s, d, tenantId)
          })
          copied = true
          await this.routes.persist(srcIsMain ? s : this.#main, tenantId, target)
          persistedOutside = !srcIsMain
          await purgeTenantRows(s, tenantId, { tenantRow: !srcIsMain })
          await markRelocated(s, tenantId)
          return started
        })
    } catch (err) {
      if (persistedOutside) {
        // The route already points at the target, which holds every row: the move stands, with
        // leftovers in the former database (purged by a later move back there).
        this.deps.log.warn({ err, tenantId }, 'removing the moved rows from the former database failed')
        return undefined
      }
      // Why: a route persisted inside the rolled-back source transaction never happened.
      if (srcIsMain) this.routes.forget(tenantId)
      if (copied) {
        await dst
          .transaction()
          .execute(async (d) => {
            await purgeTenantRows(d, tenantId)
            await markRelocated(d, tenantId)
          })
          .catch((e: unknown) =>
            this.deps.log.warn({ err: e, tenantId }, 'cleaning the target after a failed move failed'),
          )
      }
      throw err
    }
  }

  /**
   * Audit rows are written without touching the locked rows, so some may land in the source after the
   * copy's snapshot (`copiedAt`): copy those too (the ones copied already are skipped). Best effort; a
   * failure is logged.
   */
  async #sweepAudit(tenantId: string, src: Kysely<Database>, dst: Kysely<Database>, copiedAt: Date) {
    try {
      await copyTenantRows(src, dst, tenantId, {
        tables: [AUDIT_TABLE],
        since: new Date(copiedAt.getTime() - LATE_AUDIT_MS),
      })
    } catch (err) {
      this.deps.log.warn({ err, tenantId }, 'moving late audit rows after a relocation failed')
    }
  }

  /**
   * Deletes a tenant everywhere: its audit rows are brought home to the main database first (they
   * outlive the tenant), then the tenant row goes (cascading to every row the main database holds),
   * then its routed copy (whose audit rows stay, marked, until retention). Returns false when the
   * tenant did not exist.
   */
  async deleteTenant(tenantId: string): Promise<boolean> {
    const { dbs, log } = this.deps
    const routed = dbs.routedFor(tenantId)
    if (routed) {
      await copyTenantRows(routed.db, this.#main, tenantId, {
        tables: [AUDIT_TABLE],
        ignoreConflicts: true,
      })
    }
    const deleted = await this.#main.transaction().execute((trx) => deleteTenantFromMain(trx, tenantId))
    if (routed) {
      this.routes.forget(tenantId)
      await routed.db
        .transaction()
        .execute(async (trx) => {
          await purgeTenantRows(trx, tenantId, { tenantRow: true })
          await markRelocated(trx, tenantId)
        })
        .catch((err: unknown) =>
          log.warn({ err, tenantId }, 'removing a deleted tenant’s routed rows failed'),
        )
      await dbs.unroute(tenantId)
    }
    return deleted
  }
}
