import cluster, { type Worker } from 'node:cluster'
import type { Config } from '../config.js'
import { serveWindowCounters, type ClusterLike } from '../lib/cluster-window-store.js'

// WORKERS=n (docs/decisions.md D15): n server processes on one port through node:cluster, sharing the
// database and Redis. The primary only supervises: it replaces a worker that dies, and on SIGTERM or
// SIGINT passes the signal on and exits once every worker has drained (each one's own graceful stop).
// It also holds the per-IP rate-limit counters the workers share when Redis does not
// (src/lib/cluster-window-store.ts): an address gets one budget, not one per worker.

/** Runs the primary of a worker cluster: forks, replaces the dead, and exits once a stop has drained them. */
export function superviseWorkers(config: Config, log: (msg: string) => void): void {
  let stopping = false
  // Why the cast: node:cluster's listener gets a Worker, whose send takes any Serializable message.
  serveWindowCounters(cluster as unknown as ClusterLike)
  const fork = (): Worker => cluster.fork()
  for (let i = 0; i < config.workers; i++) fork()
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0)
      return
    }
    log(`worker ${worker.process.pid} exited (${signal ?? code}); starting another`)
    fork()
  })
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return
    stopping = true
    log(`${signal}: stopping ${config.workers} workers`)
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill(signal)
    // Why a bound: a worker that does not stop must not keep the primary alive past the promise.
    setTimeout(() => process.exit(1), config.shutdownTimeoutMs + 1000).unref()
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
}

/** Whether this process is the supervising primary of a cluster (WORKERS above 1). */
export function isPrimaryOfCluster(config: Config): boolean {
  return config.workers > 1 && cluster.isPrimary
}
