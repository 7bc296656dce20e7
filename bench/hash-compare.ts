// Compares bcrypt cost-12 verify throughput on all cores: @node-rs/bcrypt's native async binding (what
// src/lib/hashing.ts uses) against pure-JS bcryptjs in a worker_threads pool (the usual alternative).
// bcryptjs is not a project dependency: install it outside the project and point BCRYPTJS at it, e.g.
//   mkdir -p /tmp/bcryptjs-bench && cd /tmp/bcryptjs-bench && npm i bcryptjs
//   npx tsx bench/hash-compare.ts            (BENCH_MS=8000 per run by default)
import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { DUMMY_BCRYPT_HASH, defaultHashConcurrency, rawBcryptComparesPerSecond } from '../src/lib/hashing.js'

const durationMs = Number(process.env.BENCH_MS ?? 8000)
const bcryptjsPath = process.env.BCRYPTJS ?? '/tmp/bcryptjs-bench/node_modules/bcryptjs/index.js'
const cores = availableParallelism()

// A worker answers each { id, password, hash } with { id, ok }: one compare per message, like a real
// pool serving login requests, so the measurement includes the message round trip.
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads')
import(workerData.bcryptjsPath).then(({ default: bcryptjs }) => {
  parentPort.on('message', (m) => {
    parentPort.postMessage({ id: m.id, ok: bcryptjs.compareSync(m.password, m.hash) })
  })
  parentPort.postMessage({ ready: true })
})
`

interface Reply {
  id?: number
  ok?: boolean
  ready?: boolean
}

/** Starts `size` bcryptjs workers and returns a compare function that dispatches to an idle one. */
async function startBcryptjsPool(size: number) {
  const idle: Worker[] = []
  const waiting: Array<(w: Worker) => void> = []
  const pending = new Map<number, (ok: boolean) => void>()
  let nextId = 0
  const workers = await Promise.all(
    Array.from({ length: size }, () => {
      const w = new Worker(workerSource, { eval: true, workerData: { bcryptjsPath } })
      return new Promise<Worker>((resolve, reject) => {
        w.once('error', reject)
        w.on('message', (m: Reply) => {
          if (m.ready) return resolve(w)
          pending.get(m.id as number)?.(m.ok === true)
          pending.delete(m.id as number)
          const next = waiting.shift()
          if (next) next(w)
          else idle.push(w)
        })
      })
    }),
  )
  idle.push(...workers)
  const compare = async (password: string, hash: string): Promise<boolean> => {
    const w = idle.pop() ?? (await new Promise<Worker>((resolve) => waiting.push(resolve)))
    const id = nextId++
    return new Promise<boolean>((resolve) => {
      pending.set(id, resolve)
      w.postMessage({ id, password, hash })
    })
  }
  return { compare, close: () => Promise.all(workers.map((w) => w.terminate())) }
}

/** Keeps `concurrency` compares in flight through `compare` for durationMs; returns compares per second. */
async function ratePerSecond(compare: () => Promise<unknown>, concurrency: number): Promise<number> {
  let count = 0
  const start = performance.now()
  const deadline = start + durationMs
  const loop = async () => {
    while (performance.now() < deadline) {
      await compare()
      count++
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop))
  return count / ((performance.now() - start) / 1000)
}

console.log(`cores: ${cores}, UV_THREADPOOL_SIZE: ${process.env.UV_THREADPOOL_SIZE ?? '(default 4)'}`)
console.log(
  `hasher default concurrency: ${defaultHashConcurrency()}, ${durationMs} ms per run, bcrypt cost 12\n`,
)

const single = await rawBcryptComparesPerSecond(durationMs, 1)
console.log(`@node-rs/bcrypt async, 1 in flight:         ${single.toFixed(2)} compares/s`)
const native = await rawBcryptComparesPerSecond(durationMs, cores)
console.log(`@node-rs/bcrypt async, ${cores} in flight:         ${native.toFixed(2)} compares/s`)
const over = await rawBcryptComparesPerSecond(durationMs, cores * 4)
console.log(
  `@node-rs/bcrypt async, ${cores * 4} in flight:         ${over.toFixed(2)} compares/s (oversubscribed)`,
)

if (existsSync(bcryptjsPath)) {
  const pool = await startBcryptjsPool(cores)
  const js = await ratePerSecond(() => pool.compare('not the password', DUMMY_BCRYPT_HASH), cores)
  await pool.close()
  console.log(`bcryptjs, worker_threads pool of ${cores}:    ${js.toFixed(2)} compares/s`)
  console.log(`\nnative / bcryptjs: ${(native / js).toFixed(2)}x`)
} else {
  console.log(`bcryptjs not found at ${bcryptjsPath}: skipped (see the header of this file)`)
}
