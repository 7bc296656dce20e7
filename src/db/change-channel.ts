import { randomUUID } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import pg from 'pg'
import type { Database } from './database.js'

/** The PostgreSQL channel every instance listens on. */
export const CHANGE_CHANNEL = 'tessera_changes'
/** The `application_name` of every listening connection. */
export const CHANNEL_APPLICATION_NAME = 'tessera-change-channel'

/** What changed, as one instance tells the others (contract section 14). */
export interface ChangeMessage {
  /** A tenant's row (status, name, configuration); `*` for all of them (a deletion frees a code). */
  readonly tenant?: string
  /** A tenant's signing secrets or key pairs. */
  readonly signing?: string
  /** Client Keys (a revocation, an update, a rotation, or their tenant's status). */
  readonly clientKeys?: true
  /** A tenant's OAuth clients or OpenID provider settings: its provider instance is rebuilt. */
  readonly oauthClients?: string
}

/**
 * `up` while changes from other instances arrive; `down` while the listener is reconnecting (caches
 * fall back to their 2-second lifetime); `local` where no other instance can share the database (PGlite).
 */
export type ChannelStatus = 'up' | 'down' | 'local'

/** Tells other instances what changed, and this one what they changed. */
export interface ChangeChannel {
  /** Sends a change; resolves once sent, never rejects (the caches' lifetime bounds a lost message). */
  publish(message: ChangeMessage): Promise<void>
  /** `onChange` runs for each other instance's message; `onResync` after a gap (every cache is dropped). */
  start(onChange: (m: ChangeMessage) => void, onResync: () => void): Promise<void>
  status(): ChannelStatus
  close(): Promise<void>
}

/** PGlite: one process holds the database, so there is no other instance to tell. */
export const localChannel: ChangeChannel = {
  publish: () => Promise.resolve(),
  start: () => Promise.resolve(),
  status: () => 'local',
  close: () => Promise.resolve(),
}

export interface PgChannelOptions {
  readonly log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void }
  /** Between reconnection attempts; default 1,000 ms. */
  readonly retryMs?: number
  /** A probe of the listening connection this often finds a silently dead one; default 5,000 ms. */
  readonly probeMs?: number
}

/** The fields of a message that are what they claim to be (anything else is ignored); null when none is. */
function parse(payload: string | undefined): (ChangeMessage & { from?: unknown }) | null {
  try {
    const v: unknown = JSON.parse(payload ?? '')
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return null
    const o = v as Record<string, unknown>
    const str = (x: unknown) => (typeof x === 'string' && x !== '' ? x : undefined)
    const change: ChangeMessage = {
      ...(str(o.tenant) ? { tenant: str(o.tenant) } : {}),
      ...(str(o.signing) ? { signing: str(o.signing) } : {}),
      ...(o.clientKeys === true ? { clientKeys: true as const } : {}),
      ...(str(o.oauthClients) ? { oauthClients: str(o.oauthClients) } : {}),
    }
    return Object.keys(change).length === 0 ? null : { ...change, from: o.from }
  } catch {
    return null
  }
}

/**
 * LISTEN/NOTIFY on the main database. Why PostgreSQL and not Redis pub/sub: the main database is there
 * in every deployment (Redis is optional), and a notification is delivered only if the change committed.
 * One dedicated connection listens; when it drops, the status is `down`, it reconnects every `retryMs`,
 * and after reconnecting every cache is dropped (messages sent meanwhile were lost).
 */
export class PgChangeChannel implements ChangeChannel {
  private readonly id = randomUUID()
  private client: pg.Client | null = null
  private connected = false
  private closed = false
  private timer: NodeJS.Timeout | undefined
  private handlers: { onChange: (m: ChangeMessage) => void; onResync: () => void } | null = null

  constructor(
    private readonly url: string,
    private readonly db: Kysely<Database>,
    private readonly opts: PgChannelOptions,
  ) {}

  async publish(message: ChangeMessage): Promise<void> {
    const payload = JSON.stringify({ ...message, from: this.id })
    try {
      await sql`select pg_notify(${CHANGE_CHANNEL}, ${payload})`.execute(this.db)
    } catch (err) {
      this.opts.log.warn({ err }, 'change channel: a change could not be sent; caches expire within 2 s')
    }
  }

  async start(onChange: (m: ChangeMessage) => void, onResync: () => void): Promise<void> {
    this.handlers = { onChange, onResync }
    await this.connect(false)
  }

  status(): ChannelStatus {
    return this.connected ? 'up' : 'down'
  }

  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.timer)
    const c = this.client
    this.client = null
    this.connected = false
    await c?.end().catch(() => undefined)
  }

  /** Opens the listening connection; on failure schedules another attempt. */
  private async connect(resync: boolean): Promise<void> {
    if (this.closed) return
    const client = new pg.Client({
      connectionString: this.url,
      // Why a name: operators (and the tests) can tell the listening connection in pg_stat_activity.
      application_name: CHANNEL_APPLICATION_NAME,
      keepAlive: true,
      connectionTimeoutMillis: 5000,
      query_timeout: 5000,
    })
    client.on('error', () => this.lost(client))
    client.on('end', () => this.lost(client))
    client.on('notification', (n) => this.received(n.payload))
    this.client = client
    try {
      await client.connect()
      await client.query(`listen ${CHANGE_CHANNEL}`)
    } catch (err) {
      this.opts.log.warn({ err }, 'change channel: cannot listen; caches expire within 2 s until it can')
      this.lost(client)
      return
    }
    if (this.closed || this.client !== client) return void client.end().catch(() => undefined)
    this.connected = true
    if (resync) {
      this.opts.log.info({}, 'change channel: listening again; every cache dropped')
      this.handlers?.onResync()
    }
    this.schedule(() => this.probe(client), this.opts.probeMs ?? 5000)
  }

  /** A query on the listening connection: a connection that died without telling fails it. */
  private probe(client: pg.Client): void {
    client.query('select 1').then(
      () => this.client === client && this.schedule(() => this.probe(client), this.opts.probeMs ?? 5000),
      () => this.lost(client),
    )
  }

  /** The listening connection is gone: `down` until another one listens. */
  private lost(client: pg.Client): void {
    if (this.client !== client) return
    this.client = null
    this.connected = false
    client.end().catch(() => undefined)
    if (this.closed) return
    this.schedule(() => void this.connect(true), this.opts.retryMs ?? 1000)
  }

  private schedule(fn: () => void, ms: number): void {
    clearTimeout(this.timer)
    this.timer = setTimeout(fn, ms)
    this.timer.unref()
  }

  private received(payload: string | undefined): void {
    const m = parse(payload)
    if (!m || m.from === this.id) return
    const { from: _from, ...change } = m
    this.handlers?.onChange(change)
  }
}
