import type { AppContext } from '../../context.js'
import { decryptSecret } from '../../lib/crypto-box.js'
import { claimDue, outboxBacklog, settleMail, type ClaimedMail } from './queries.js'
import type { Envelope, MailTransport } from './transport.js'
import type { RenderedMessage } from './templates.js'

// The outbox's sender (docs/decisions.md D22). Rows are written in the transaction of their token;
// this loop leases due rows, sends each after that commit, and settles it. Retries back off: 6 tries
// over about 15 minutes (contract: at least 5 over at least 10). A row whose token expired is dropped.

/** Tries of one message before it is given up as failed. */
export const MAX_ATTEMPTS = 6
/** Delay after the n-th failed try (n from 1): 30 s doubling, so tries 1..6 span 30+60+120+240+480 s. */
export const backoffMs = (attempt: number): number => 30_000 * 2 ** (attempt - 1)
/** How long a lease lasts: longer than one send's bounded timeouts. */
const LEASE_MS = 60_000
const POLL_MS = 5_000
/** Deferred jobs (forgot-password lookups) one instance holds at most. */
const MAX_DEFERRED = 10_000
/** Deferred jobs running at once: the rest wait as closures, holding no connection and no query buffer. */
const DEFERRED_CONCURRENCY = 4
const BATCH = 20

export type MailResult = 'sent' | 'retry' | 'failed' | 'expired'
type Logger = {
  warn(obj: object, msg: string): void
  info(obj: object, msg: string): void
}

/** Where the outbox's rows live: the main database and each routed tenant database. */
function databases(ctx: AppContext) {
  return [ctx.dbs.main, ...ctx.dbs.routedGroups().map((g) => g.db)]
}

/** The encryption context of a tenant's messages at rest. */
export const messageContext = (tenantId: string) => `mail:${tenantId}`

/** The outbox sender of one instance, plus the deferred work of requests that must not wait for it. */
export class Mailer {
  readonly counts: Record<MailResult, number> = { sent: 0, retry: 0, failed: 0, expired: 0 }
  /** Whether the last delivery this instance tried was refused by the SMTP server (health's `failing`). */
  lastDeliveryFailed = false
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | null = null
  #again = false
  #stopped = true
  readonly #jobs = new Set<Promise<void>>()
  #held: (() => void)[] | null = null
  #active = 0
  readonly #slots: (() => void)[] = []

  constructor(
    private readonly ctx: AppContext,
    private readonly transport: MailTransport,
    private readonly log: Logger,
  ) {}

  /** Starts polling (every 5 s) for due rows; a nudge runs a pass at once. */
  start(): void {
    this.#stopped = false
    this.#timer = setInterval(() => this.nudge(), POLL_MS)
    this.#timer.unref()
    this.nudge()
  }

  /** Stops the loop and waits for the pass and deferred jobs in flight; unsent rows stay for the next start. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#timer)
    this.release()
    await Promise.allSettled([...this.#jobs])
    await this.#running
    this.transport.close()
  }

  /** Runs a pass now (or right after the one in flight): called after a commit that queued a message. */
  nudge(): void {
    if (this.#stopped) return
    if (this.#running) {
      this.#again = true
      return
    }
    this.#running = this.#pass().finally(() => {
      this.#running = null
      if (this.#again) {
        this.#again = false
        this.nudge()
      }
    })
  }

  /**
   * Runs `work` after the current request has been answered, so its cost never shows in the answer. Past
   * MAX_DEFERRED waiting jobs (a flood beyond what the database absorbs), new work is dropped with a
   * warning: a reset request is lost (the user asks again), never a queued message.
   */
  defer(work: () => Promise<void>): void {
    if (this.#jobs.size >= MAX_DEFERRED) {
      this.log.warn({ deferred: this.#jobs.size }, 'email: too much deferred work; a request was dropped')
      return
    }
    const run = async () => {
      // Why setImmediate: the reply is written before the deferred work starts.
      await new Promise((r) => setImmediate(r))
      if (this.#held) await new Promise<void>((r) => this.#held?.push(r))
      // Why a few at a time: a flood of forgot requests would otherwise open as many transactions at once
      // (measured: peak RSS 315 MB under make bench's forgot rows).
      if (this.#active >= DEFERRED_CONCURRENCY) await new Promise<void>((r) => this.#slots.push(r))
      this.#active++
      try {
        await work()
      } finally {
        this.#active--
        this.#slots.shift()?.()
      }
    }
    const p = run().catch((err: unknown) => this.log.warn({ err }, 'email: deferred work failed'))
    this.#jobs.add(p)
    void p.finally(() => this.#jobs.delete(p))
  }

  /** Tests: hold deferred work until `release`, to count what a request itself does. */
  hold(): void {
    this.#held ??= []
  }

  /** Lets held deferred work run. */
  release(): void {
    const held = this.#held ?? []
    this.#held = null
    for (const r of held) r()
  }

  /** Waits until deferred work is done and a pass found nothing more to send now. */
  async idle(): Promise<void> {
    while (this.#jobs.size > 0) await Promise.allSettled([...this.#jobs])
    this.nudge()
    while (this.#running) await this.#running
  }

  /** Pending rows across databases, and the oldest's age (health and the gauge). */
  async backlog(): Promise<{ pending: number; oldestSeconds: number }> {
    const now = new Date(this.ctx.clock.now())
    let pending = 0
    let oldestSeconds = 0
    for (const db of databases(this.ctx)) {
      const b = await outboxBacklog(db, now)
      pending += b.pending
      oldestSeconds = Math.max(oldestSeconds, b.oldestSeconds)
    }
    return { pending, oldestSeconds }
  }

  async #pass(): Promise<void> {
    for (const db of databases(this.ctx)) {
      try {
        for (;;) {
          const now = new Date(this.ctx.clock.now())
          const lease = new Date(now.getTime() + LEASE_MS)
          const rows = await claimDue(db, now, lease, BATCH)
          for (const row of rows) await this.#deliver(db, row, lease)
          if (rows.length < BATCH || this.#stopped) break
        }
      } catch (err) {
        this.log.warn({ err }, 'email: an outbox pass failed; the next one retries')
      }
    }
  }

  async #deliver(db: AppContext['dbs']['main'], row: ClaimedMail, lease: Date): Promise<void> {
    const now = new Date(this.ctx.clock.now())
    const attempts = row.attempts + 1
    const settle = (status: 'sent' | 'failed' | 'expired' | 'pending', extra: object = {}) =>
      settleMail(db, row.id, lease, { status, attempts, now, ...extra })
    if (row.expiresAt.getTime() <= now.getTime() || row.messageEnc === null) {
      // Never sent late: the link would not work, and a late mail looks like an attack to its reader.
      await settle('expired', { attempts: row.attempts })
      this.counts.expired++
      return
    }
    const message = JSON.parse(
      decryptSecret(row.messageEnc, this.ctx.secretsKey, messageContext(row.tenantId)),
    ) as RenderedMessage
    const envelope: Envelope = { ...message, to: row.recipient }
    try {
      await this.transport.send(envelope)
    } catch (err) {
      // Why only the code: an SMTP server's answer may echo the message, and the message holds the token.
      const error = err instanceof Error ? ((err as { code?: string }).code ?? err.name) : 'error'
      this.lastDeliveryFailed = true
      if (attempts >= MAX_ATTEMPTS) {
        await settle('failed', { error })
        this.counts.failed++
        this.log.warn({ outboxId: row.id, attempts, error }, 'email: a message was given up')
      } else {
        await settle('pending', { error, nextAttemptAt: new Date(now.getTime() + backoffMs(attempts)) })
        this.counts.retry++
      }
      return
    }
    this.lastDeliveryFailed = false
    await settle('sent')
    this.counts.sent++
  }
}

const mailers = new WeakMap<AppContext, Mailer>()

/** The instance's mailer; undefined when SMTP_URL is unset (mail off). */
export function mailerOf(ctx: AppContext): Mailer | undefined {
  return mailers.get(ctx)
}

/** Remembers the instance's mailer (the email plugin makes it). */
export function setMailer(ctx: AppContext, mailer: Mailer): void {
  mailers.set(ctx, mailer)
}
