/**
 * The Better Auth harness's ceiling for `POST /validate` (`make bench-peer-ceiling`): its own validate workload
 * (targets/ours.mjs's request and check, wrapped as its bench.mjs wraps them) against the service, then against a
 * server that only replays the service's captured answers (bench/replay-ceiling.ts), then against that replay with
 * the contract's 16 security, cache and rate-limit header lines left out. Prints responses a second and the CPU
 * each side spent per response.
 *
 * PEER_DIR (default ../shared/peers/better-auth) is the harness, installed (`npm ci` there). The service runs on
 * its throw-away embedded database: validate reads none. BENCH_SECONDS (10) per run, after 5 s of warm-up.
 */
import { execSync, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type autocannonType from 'autocannon'
import type { Request as CannonRequest } from 'autocannon'
import { captureResponse, replayServer } from './replay-ceiling.js'
import { startFlags, ticksOf } from './proc.js'

const PEER_DIR = resolve(process.env.PEER_DIR ?? '../shared/peers/better-auth')
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const WARMUP = 5
const PORT = 4200
const TICK_MS = 10 // USER_HZ is 100 on Linux

/** What this bench uses of the harness's target module (plain JavaScript, so typed here). */
interface PeerUser {
  access: string
}
interface PeerWorkload {
  prepare(users: PeerUser[], o: { warmupS: number; durationS: number }): Promise<void>
  request(u: PeerUser): {
    method: NonNullable<CannonRequest['method']>
    path: string
    headers: Record<string, string>
  }
  check(status: number, body: string, headers: Record<string, string>, u: PeerUser): boolean
}
interface PeerTarget {
  spawn: { env: Record<string, string> }
  beforeSeed(runId: string): Promise<void>
  seedUser(i: number, runId: string): Promise<PeerUser>
  workloads: { validate: PeerWorkload }
}

/** autocannon's per-connection context: which user the request in flight was sent for. */
interface Handed {
  u?: number
}

/** The harness's header lines that the contract requires on every response (sections 9 and 10). */
const CONTRACT_HEADERS =
  /^(content-security|cross-origin|origin-agent|referrer|strict-transport|x-content|x-dns|x-download|x-frame|x-permitted|x-xss|cache-control|x-ratelimit)/i

/** CPU ms of this process's main thread: the driver's, without the replay's worker thread. */
function driverCpuMs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return (Number(stat[11]) + Number(stat[12])) * TICK_MS
}
/** CPU ms of the whole process (the driver plus, in a replay run, the replay's thread). */
const processCpuMs = () => ticksOf(process.pid) * TICK_MS

async function main(): Promise<void> {
  if (!existsSync(resolve(PEER_DIR, 'node_modules/autocannon')))
    throw new Error(`no installed harness at ${PEER_DIR} (PEER_DIR; run npm ci there)`)
  process.env.OURS_PORT = String(PORT)
  process.env.OURS_DATABASE_URL = 'memory://'
  // Why these casts: the harness is plain JavaScript outside this project, typed by the interfaces above.
  const target = (
    (await import(pathToFileURL(resolve(PEER_DIR, 'targets/ours.mjs')).href)) as { default: PeerTarget }
  ).default
  const autocannon = (
    (await import(pathToFileURL(resolve(PEER_DIR, 'node_modules/autocannon/autocannon.js')).href)) as {
      default: typeof autocannonType
    }
  ).default
  const w = target.workloads.validate

  /** One run, as the harness's runWorkload makes it: users handed out so that none is used twice at once. */
  async function runOnce(
    url: string,
    users: PeerUser[],
    seconds: number,
  ): Promise<{ ok: number; failed: number }> {
    const free = users.map((_, i) => i)
    let ok = 0
    let failed = 0
    const latencies: number[] = []
    await new Promise<void>((done, fail) => {
      const instance = autocannon(
        {
          url,
          connections: 10,
          pipelining: 1,
          duration: seconds,
          requests: [
            {
              setupRequest(req, context) {
                const i = free.shift() ?? Math.floor(Math.random() * users.length)
                ;(context as Handed).u = i
                const r = w.request(users[i] as PeerUser)
                return { ...req, ...r, headers: { ...req.headers, ...r.headers } }
              },
              onResponse(status, body, context, headers) {
                const i = (context as Handed).u ?? 0
                let good = false
                try {
                  good = w.check(status, body, headers as Record<string, string>, users[i] as PeerUser)
                } catch {
                  good = false
                }
                if (good) ok++
                else failed++
                free.push(i)
              },
            },
          ],
        },
        (err: unknown) => (err ? fail(err) : done()),
      )
      // Kept as the harness keeps them, for the same work per response; not printed.
      instance.on('response', (_client, _status, _bytes, ms) => latencies.push(ms))
    })
    return { ok, failed }
  }

  /** Warm-up, then a measured run; prints its rate and each side's CPU per response. */
  async function measure(label: string, url: string, users: PeerUser[], serverPid?: number): Promise<void> {
    await runOnce(url, users, WARMUP)
    const [driver0, process0, server0] = [driverCpuMs(), processCpuMs(), serverPid ? ticksOf(serverPid) : 0]
    const started = performance.now()
    const { ok, failed } = await runOnce(url, users, SECONDS)
    const seconds = (performance.now() - started) / 1000
    const driver = driverCpuMs() - driver0
    const server = serverPid ? (ticksOf(serverPid) - server0) * TICK_MS : processCpuMs() - process0 - driver
    const perResponse = (ms: number) => (ms / ok).toFixed(4)
    console.log(
      `${label.padEnd(58)} ${(ok / seconds).toFixed(0).padStart(7)}/s  failed ${failed}  ` +
        `CPU ms per response: driver ${perResponse(driver)}, server ${perResponse(server)}`,
    )
  }

  execSync('npm run build --silent', { stdio: 'inherit' })
  const service = spawn(process.execPath, [...startFlags(), 'dist/server.js'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, ...target.spawn.env, DATABASE_URL: 'memory://' },
  })
  try {
    const base = `http://127.0.0.1:${PORT}`
    for (let i = 0; ; i++) {
      const up = await fetch(`${base}/api/v1/health`, {
        headers: { 'x-forwarded-for': '198.19.255.1' },
      }).then(
        (r) => r.ok,
        () => false,
      )
      if (up) break
      if (i > 150) throw new Error('the service did not answer /health')
      await new Promise((r) => setTimeout(r, 200))
    }
    const runId = Date.now().toString(36)
    await target.beforeSeed(runId)
    const users: PeerUser[] = []
    for (let i = 0; i < 50; i += 5)
      users.push(...(await Promise.all([0, 1, 2, 3, 4].map((k) => target.seedUser(i + k, runId)))))
    await w.prepare(users, { warmupS: WARMUP * 4, durationS: SECONDS * 4 })

    await measure('the service', base, users, service.pid)
    const replies = new Map<string, Buffer>()
    for (const u of users) {
      const r = w.request(u)
      replies.set(`Bearer ${u.access}`, await captureResponse(PORT, r.method, r.path, r.headers))
    }
    const [first] = replies.values()
    const lines = first?.toString('latin1').split('\r\n\r\n')[0]?.split('\r\n').slice(1) ?? []
    console.log(`(a validate answer: ${lines.length} header lines, ${first?.length ?? 0} bytes)`)
    const stripped = new Map(
      [...replies].map(([auth, bytes]) => {
        const [head = '', body = ''] = bytes.toString('latin1').split('\r\n\r\n')
        const kept = head.split('\r\n').filter((l) => !CONTRACT_HEADERS.test(l))
        return [auth, Buffer.from(`${kept.join('\r\n')}\r\n\r\n${body}`, 'latin1')]
      }),
    )
    for (const [label, set] of [
      ['a replay of its answers', replies],
      ['the replay without the 16 security, cache, rate-limit lines', stripped],
    ] as const) {
      const replay = await replayServer(set)
      try {
        await measure(label, `http://127.0.0.1:${replay.port}`, users)
      } finally {
        await replay.stop()
      }
    }
  } finally {
    service.kill('SIGTERM')
  }
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
