import type { Kysely } from 'kysely'
import { LRUCache } from 'lru-cache'
import type { Database } from '../../db/database.js'
import type { Clock } from '../../lib/clock.js'
import type { GrantRow } from '../../security/grants.js'
import {
  findOAuthClientByClientId,
  insertOAuthClient,
  type OAuthClientWithHashes,
} from '../oauth-clients/queries.js'
import { registeredClientRow } from './registration.js'
import { clientMetadata } from './client-metadata.js'
import * as q from './payload-queries.js'

// oidc-provider's storage (its Adapter interface), on Kysely: one class per tenant, bound to that tenant's
// database and id. Clients come from oauth_clients, where a dynamically registered one is written too
// (registration.ts checks it first); every other model lives in oidc_payloads.

/** What requestMiddleware touches of the library's (Koa's) request context. */
interface KoaContext {
  remove(header: string): void
  status: number
  body: unknown
  app: { emit(event: 'error', err: unknown, ctx: unknown): unknown }
}

/** The payload fields the adapter reads; the library stores more, which the row keeps whole. */
interface Payload {
  [key: string]: unknown
  grantId?: string
  uid?: string
  userCode?: string
  accountId?: string
  consumed?: number
}

/**
 * The payloads written on every token call, whose loss in a crash costs a repeated request or a new
 * sign-in, never a wrong answer: committed asynchronously on a PostgreSQL server (payload-queries.ts).
 * Sessions and grants, which outlive a sign-in, wait for their flush.
 */
const SHORT_LIVED = new Set([
  'AccessToken',
  'RefreshToken',
  'AuthorizationCode',
  'Interaction',
  'ClientCredentials',
])

/**
 * The models whose lookup reads their grant, session and account in the same statement (the library asks for
 * them next), each with the models looked up in the same statement. Why the three together: without a type
 * hint, introspection and revocation ask for a token value as an access token, client credentials and a
 * refresh token at once (the library's token_find.js); one statement answers all three.
 */
const BY_VALUE = ['AccessToken', 'ClientCredentials', 'RefreshToken'] as const
const WITH_CONTEXT = new Map<string, readonly [string, ...string[]]>([
  ...BY_VALUE.map((m) => [m, BY_VALUE] as const),
  ['AuthorizationCode', ['AuthorizationCode']],
])

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * The adapter class `oidc-provider` instantiates per model name, for one tenant; `currentRequest` is the
 * library's context of the request being served (`Provider.ctx`), if any.
 */
export function adapterFor(
  db: Kysely<Database>,
  tenantId: string,
  clock: Clock,
  onServer: boolean,
  currentRequest: () => object | undefined,
) {
  const now = () => new Date(clock.now())
  const out = (row: Awaited<ReturnType<typeof q.findPayload>>): Payload | undefined => {
    if (!row) return undefined
    const p = row.payload as Payload
    return row.consumed_at ? { ...p, consumed: Math.floor(new Date(row.consumed_at).getTime() / 1000) } : p
  }
  // The tenant's clients by client_id, found ones only (a miss may be registered a moment later). Why safe to
  // keep: this adapter lives as long as its provider instance, which the pool drops on every instance when a
  // client of the tenant changes (section 14's change channel); the metadata is built per call, since a former
  // secret's grace ends with time. It saves a round trip on every token, userinfo and introspection call.
  const clients = new LRUCache<string, OAuthClientWithHashes>({ max: 1000 })
  // Grants and provider sessions read with a token, code or refresh token, kept for the `Grant.find` and the
  // `Session.findByUid` (the session binding's check) that follow in the same request (userinfo,
  // introspection, both grants): one round trip instead of three. Why per request (the library's context,
  // weakly held): a grant revoked or a session ended a moment later is never served to another request. Keys:
  // `Grant:<id>`, `Session:<uid>`.
  const prefetched = new WeakMap<object, Map<string, Payload>>()
  const early = () => ofRequest(prefetched)
  // The account's user and grant rows, by account id, for the request's findAccount (library.ts).
  const accounts = new WeakMap<object, Map<string, GrantRow[]>>()
  const earlyAccounts = () => ofRequest(accounts)
  const ofRequest = <V>(maps: WeakMap<object, Map<string, V>>): Map<string, V> => {
    // Why a fresh key outside a request: nothing is kept for a lookup no request asked for.
    const ctx = currentRequest() ?? {}
    let m = maps.get(ctx)
    if (!m) maps.set(ctx, (m = new Map()))
    return m
  }
  /** The payload prefetched for this request under `key`, taken once; a change of the model forgets them. */
  const takeEarly = (key: string): Payload | undefined => {
    const m = early()
    const found = m.get(key)
    m.delete(key)
    return found
  }
  // A token value's pending lookup, by `<first model asked>:<id>`, shared by the lookups of one request.
  const lookups = new WeakMap<object, Map<string, ReturnType<typeof q.findTokenWithContext>>>()
  const lookupOf = (models: readonly [string, ...string[]], id: string) => {
    const m = ofRequest(lookups)
    const key = `${models[0]}:${id}`
    let pending = m.get(key)
    if (!pending) {
      pending = q.findTokenWithContext(db, tenantId, models, id, now())
      m.set(key, pending)
      pending.catch(() => m.delete(key))
    }
    return pending
  }
  const forget = (model: string, id?: string): void => {
    // Why every pending lookup: a write of any token may be read back next, and they are few per request.
    ofRequest(lookups).clear()
    const m = early()
    // Why every session: the library writes a session by its id, and the prefetch knows it by its uid.
    if (model === 'Session') for (const key of m.keys()) if (key.startsWith('Session:')) m.delete(key)
    if (model === 'Grant' && id) m.delete(`Grant:${id}`)
  }
  // Write-behind within a request (the library's context, when requestMiddleware wraps it): the short-lived
  // payloads' writes wait, and go in one statement at the request's next read or other write, or before its
  // answer leaves (requestMiddleware). Why: a refresh grant stores the successor and the access token, two
  // round trips in a row where one does; the answer carrying them is never sent before they are stored. Why
  // only in a wrapped request: nothing else would flush them. Why consumes go at once, synchronously committed,
  // as before: a used code or refresh token must read as used to the next request, and stay so after a crash.
  const wrapped = new WeakSet<object>()
  const queued = new WeakMap<object, q.PayloadWrite[]>()
  // The request's write in flight: every flush waits for it, so two calls of one request side by side (the
  // library's Promise.all) never pass each other's write.
  const inFlight = new WeakMap<object, Promise<void>>()
  const flush = async (ctx: object | undefined = currentRequest()): Promise<void> => {
    if (!ctx) return
    const before = inFlight.get(ctx)
    const writes = queued.get(ctx)
    if (!writes?.length) return before
    queued.delete(ctx)
    // Why the earlier failure swallowed here: it reached the call that started that write.
    const write = (before ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => q.writePayloads(db, tenantId, writes, onServer))
    inFlight.set(ctx, write)
    try {
      await write
    } finally {
      if (inFlight.get(ctx) === write) inFlight.delete(ctx)
    }
  }
  /** Queues an upsert of the current wrapped request; false outside one (the caller writes at once). */
  const later = async (write: q.PayloadWrite): Promise<boolean> => {
    const ctx = currentRequest()
    if (!ctx || !wrapped.has(ctx) || !SHORT_LIVED.has(write.model)) return false
    // Why: one statement would not keep the order of two writes of the same row.
    if (queued.get(ctx)?.some((w) => w.model === write.model && w.id === write.id)) await flush(ctx)
    const writes = queued.get(ctx) ?? []
    writes.push(write)
    queued.set(ctx, writes)
    return true
  }
  class TesseraAdapter {
    constructor(private readonly model: string) {}

    /** Stores a payload for `expiresIn` seconds. */
    async upsert(id: string, payload: Payload, expiresIn?: number): Promise<void> {
      // A client the library registered (RFC 7591, registration.ts): checked there, written as ours.
      forget(this.model, id)
      const account =
        typeof payload.accountId === 'string' && UUID.test(payload.accountId) ? payload.accountId : null
      const columns = {
        grantId: payload.grantId ?? null,
        uid: payload.uid ?? null,
        userCode: payload.userCode ?? null,
        accountId: account,
        expiresAt: expiresIn ? new Date(clock.now() + expiresIn * 1000) : null,
      }
      if (await later({ model: this.model, id, payload, columns })) return
      await flush()
      if (this.model === 'Client') {
        await insertOAuthClient(db, registeredClientRow(tenantId, id, payload))
        return
      }
      await q.upsertPayload(
        db,
        tenantId,
        this.model,
        id,
        payload,
        columns,
        onServer && SHORT_LIVED.has(this.model),
      )
    }

    /** A payload by id; a client from oauth_clients. */
    async find(id: string): Promise<Payload | undefined> {
      await flush()
      if (this.model === 'Client') {
        const row = clients.get(id) ?? (await findOAuthClientByClientId(db, tenantId, id))
        if (row) clients.set(id, row)
        return row ? (clientMetadata(row, clock.now()) as Payload) : undefined
      }
      if (this.model === 'Grant') {
        const grant = takeEarly(`Grant:${id}`)
        if (grant) return grant
      }
      const models = WITH_CONTEXT.get(this.model)
      if (models) {
        const looked = await lookupOf(models, id)
        const row = looked?.model === this.model ? looked : undefined
        const found = out(row)
        const grant = out(row?.grant)
        if (found?.grantId && grant) early().set(`Grant:${found.grantId}`, grant)
        const session = out(row?.session)
        if (row?.session && session) early().set(`Session:${row.session.uid}`, session)
        if (typeof found?.accountId === 'string' && row?.account.length)
          earlyAccounts().set(found.accountId, row.account)
        return found
      }
      return out(await q.findPayload(db, tenantId, this.model, { column: 'id', value: id }, now()))
    }

    /** A payload by its user code (the device flow, off here; kept for the interface). */
    async findByUserCode(userCode: string): Promise<Payload | undefined> {
      await flush()
      return out(
        await q.findPayload(db, tenantId, this.model, { column: 'user_code', value: userCode }, now()),
      )
    }

    /** A session by its uid. */
    async findByUid(uid: string): Promise<Payload | undefined> {
      await flush()
      if (this.model === 'Session') {
        const session = takeEarly(`Session:${uid}`)
        if (session) return session
      }
      return out(await q.findPayload(db, tenantId, this.model, { column: 'uid', value: uid }, now()))
    }

    /** Marks a payload used. */
    async consume(id: string): Promise<void> {
      forget(this.model, id)
      await flush()
      await q.consumePayload(db, tenantId, this.model, id, now())
    }

    /** Deletes a payload. */
    async destroy(id: string): Promise<void> {
      forget(this.model, id)
      await flush()
      await q.destroyPayload(db, tenantId, this.model, id)
    }

    /** Deletes everything of a grant. */
    async revokeByGrantId(grantId: string): Promise<void> {
      forget('Grant', grantId)
      await flush()
      await q.revokeGrantPayloads(db, tenantId, grantId)
    }
  }

  /** The account's rows the request's token lookup read (taken once), or undefined: then findAccount reads. */
  const takeAccount = (accountId: string): GrantRow[] | undefined => {
    const m = earlyAccounts()
    const rows = m.get(accountId)
    m.delete(accountId)
    return rows
  }
  /**
   * The library's middleware (provider.use) around each request it serves: its short-lived writes wait and
   * are stored before the answer leaves; when that fails, the answer is the library's server_error instead.
   */
  const requestMiddleware = async (ctx: KoaContext, next: () => Promise<unknown>): Promise<void> => {
    wrapped.add(ctx)
    try {
      await next()
    } finally {
      try {
        await flush(ctx)
      } catch (err) {
        ctx.app.emit('error', err, ctx)
        // Why: a redirect's Location may carry a code that was never stored.
        ctx.remove('Location')
        ctx.status = 500
        ctx.body = { error: 'server_error', error_description: 'oops! something went wrong' }
      }
    }
  }
  return { Adapter: TesseraAdapter, takeAccount, requestMiddleware }
}
