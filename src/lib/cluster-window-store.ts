// Per-IP window counters shared by the workers of one node:cluster (WORKERS above 1, no Redis answering):
// the counters live in the cluster's primary, and each worker asks it over the IPC channel node:cluster
// already opened. Why not sticky connections (each client's sockets to one worker): behind a proxy the
// address counted is the forwarded one, which the primary never sees when it hands out a socket, and one
// socket of a balancer carries many clients. Counting where the key is known (the worker, after
// TRUST_PROXY) and storing it in one place is right in every configuration.
//
// Why batches: a message each way per request would cost two pipe writes and two JSON parses each; the
// hits a worker makes in one turn of its event loop go out as one message and come back as one.

import { WindowCounterStore, type WindowHit } from './rate-limit-store.js'

/** The tag of this protocol's messages, so other IPC traffic on the channel is left alone. */
const TAG = 'tessera:window-counters'

/** How long a worker waits for the primary before counting on its own (a stalled or gone primary). */
export const PRIMARY_ANSWER_TIMEOUT_MS = 250

/** One hit asked for: request id, store name, window length, key. */
type Ask = [number, string, number, string]
/** One hit answered: request id, count, milliseconds left, overflow (1) or not (0). */
type Answer = [number, number, number, 0 | 1]

interface AskMessage {
  t: typeof TAG
  a: Ask[]
}
interface AnswerMessage {
  t: typeof TAG
  r: Answer[]
}

function isAsk(m: unknown): m is AskMessage {
  return (
    typeof m === 'object' && m !== null && (m as AskMessage).t === TAG && Array.isArray((m as AskMessage).a)
  )
}
function isAnswer(m: unknown): m is AnswerMessage {
  return (
    typeof m === 'object' &&
    m !== null &&
    (m as AnswerMessage).t === TAG &&
    Array.isArray((m as AnswerMessage).r)
  )
}

/** What the primary needs of a worker: a way to answer it (cluster's Worker has it). */
export interface WorkerLike {
  send(message: AnswerMessage, callback?: (err: Error | null) => void): boolean
}

/** The primary's side of the cluster: node:cluster itself, or a stand-in in tests. */
export interface ClusterLike {
  on(event: 'message', listener: (worker: WorkerLike, message: unknown) => void): unknown
  off(event: 'message', listener: (worker: WorkerLike, message: unknown) => void): unknown
}

/** A worker's channel to its primary: `process` in a cluster worker, or a stand-in in tests. */
export interface PrimaryChannel {
  send?(message: AskMessage, callback?: (err: Error | null) => void): boolean
  on(event: 'message', listener: (message: unknown) => void): unknown
  off(event: 'message', listener: (message: unknown) => void): unknown
}

/**
 * Serves the workers' counters from the primary: one bounded WindowCounterStore per store name and window
 * length, made on first use. Returns a function that stops serving and frees the stores.
 */
export function serveWindowCounters(cluster: ClusterLike, opts: { maxKeys?: number } = {}): () => void {
  const stores = new Map<string, WindowCounterStore>()
  const storeOf = (name: string, windowMs: number): WindowCounterStore => {
    const id = `${name}/${windowMs}`
    let s = stores.get(id)
    if (s === undefined) {
      s = new WindowCounterStore({ windowMs, maxKeys: opts.maxKeys })
      stores.set(id, s)
    }
    return s
  }
  const onMessage = (worker: WorkerLike, message: unknown): void => {
    if (!isAsk(message)) return
    const answers: Answer[] = []
    for (const [id, name, windowMs, key] of message.a) {
      const hit = storeOf(String(name), Number(windowMs)).hit(String(key))
      answers.push([id, hit.current, hit.ttlMs, hit.overflow ? 1 : 0])
    }
    // Why the callback: a worker that died meanwhile makes send fail, which must not throw here.
    worker.send({ t: TAG, r: answers }, () => undefined)
  }
  cluster.on('message', onMessage)
  return () => {
    cluster.off('message', onMessage)
    for (const s of stores.values()) s.close()
    stores.clear()
  }
}

interface Pending {
  resolve(hit: WindowHit): void
  reject(err: Error): void
  timer: NodeJS.Timeout
}

/** A worker's view of the primary's counters: `hit` resolves with the count across every worker. */
export class ClusterWindowClient {
  private nextId = 0
  private queue: Ask[] = []
  private scheduled = false
  private readonly pending = new Map<number, Pending>()
  private readonly onMessage = (message: unknown): void => {
    if (!isAnswer(message)) return
    for (const [id, current, ttlMs, overflow] of message.r) {
      const p = this.pending.get(id)
      if (p === undefined) continue
      this.pending.delete(id)
      clearTimeout(p.timer)
      p.resolve({ current, ttlMs, overflow: overflow === 1 })
    }
  }

  constructor(
    private readonly channel: PrimaryChannel,
    private readonly timeoutMs = PRIMARY_ANSWER_TIMEOUT_MS,
  ) {
    channel.on('message', this.onMessage)
  }

  /** Counts one request of `key` in the primary's store `name`; rejects when the primary does not answer in time. */
  hit(name: string, windowMs: number, key: string): Promise<WindowHit> {
    const id = ++this.nextId
    return new Promise<WindowHit>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id)
        reject(new Error(`the cluster primary did not answer within ${this.timeoutMs} ms`))
      }, this.timeoutMs)
      this.pending.set(id, { resolve, reject, timer })
      this.queue.push([id, name, windowMs, key])
      if (!this.scheduled) {
        this.scheduled = true
        // Why setImmediate: it runs after the loop has read every socket that was ready, so the hits of
        // all the requests parsed in this turn leave in one message.
        setImmediate(() => this.flush())
      }
    })
  }

  /** Stops listening and fails what is still waiting. */
  close(): void {
    this.channel.off('message', this.onMessage)
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer)
      this.pending.delete(id)
      p.reject(new Error('closed'))
    }
  }

  private flush(): void {
    this.scheduled = false
    const asks = this.queue
    this.queue = []
    const fail = (err: Error) => {
      for (const [id] of asks) {
        const p = this.pending.get(id)
        if (p === undefined) continue
        this.pending.delete(id)
        clearTimeout(p.timer)
        p.reject(err)
      }
    }
    if (this.channel.send === undefined) return fail(new Error('not a cluster worker'))
    try {
      this.channel.send({ t: TAG, a: asks }, (err) => {
        if (err) fail(err)
      })
    } catch (err) {
      // Why: send throws once the channel is closed (the primary is gone).
      fail(err as Error)
    }
  }
}
