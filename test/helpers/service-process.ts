import { spawn, type ChildProcess } from 'node:child_process'
import { execFile } from 'node:child_process'
import { createServer } from 'node:net'
import { promisify } from 'node:util'

const run = promisify(execFile)
/** The repository root, where the service and the CLI are started from. */
export const root = new URL('../..', import.meta.url).pathname

/** A free TCP port on loopback (bound, then released). */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise((resolve) => server.close(resolve))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

/** The service as a separate process (the same entry point as `npm start`, run through tsx). */
export interface ServiceProcess {
  readonly child: ChildProcess
  readonly base: string
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string
  /** Resolves with the exit code (or signal) once the process has ended. */
  readonly exited: Promise<number | string>
}

// Why: a child runs src through tsx, whose transpiled offsets differ from those of the test process
// (scripts/test-loader.mjs); merged into one report, c8 drops every file both have covered. So children record no
// coverage (tap's processinfo hook honours this switch); the figure is the test processes' own.
const NO_COVERAGE = { _TAPJS_PROCESSINFO_COVERAGE_: '0' }

/** Starts src/server.ts with `env` on a fresh port; does not wait for it to answer (see waitReady). */
export async function startService(env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort()
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    // TRUST_PROXY: tests give a client an address of its own through X-Forwarded-For from loopback (see
    // TEST_ENV in app.ts); a test of the service's default passes TRUST_PROXY: ''.
    env: {
      ...process.env,
      ...NO_COVERAGE,
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: String(port),
      TRUST_PROXY: 'loopback',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()))
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  )
  return { child, base: `http://127.0.0.1:${port}`, output: () => out, exited }
}

/**
 * Ends the service if it still runs: SIGCONT first (a failed test may have left it suspended), then
 * SIGTERM, and SIGKILL when it has not exited within 10 s.
 */
export async function stopService(service: ServiceProcess): Promise<void> {
  if (service.child.exitCode === null && service.child.signalCode === null) {
    service.child.kill('SIGCONT')
    service.child.kill('SIGTERM')
    const timer = setTimeout(() => service.child.kill('SIGKILL'), 10_000)
    await service.exited
    clearTimeout(timer)
  }
}

/** Waits until the service answers /health, or throws with its output if it exits or takes too long. */
// Why 90 s: a first start on a fresh embedded database under a loaded two-core machine (the suite's other
// groups) took over 30 s in CI; this bounds a hang, it does not time the start.
export async function waitReady(s: ServiceProcess, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let ended = false
  void s.exited.then(() => (ended = true))
  while (Date.now() < deadline && !ended) {
    try {
      const res = await fetch(`${s.base}/health`)
      if (res.status === 200) return
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`service did not become ready:\n${s.output()}`)
}

/** Runs the operator CLI (`npm run cli -- ...`) and returns its exit code and output. */
export async function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
      cwd: root,
      env: { ...process.env, ...NO_COVERAGE, LOG_LEVEL: 'silent', ...env },
    })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

/** The `Authorization` header of an access token, for `call`'s headers. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** The data of a success envelope, or a failure naming the call and its answer. */
export function dataOf<T>(res: Awaited<ReturnType<typeof call>>, what: string, status = 200): T {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.json)}`)
  return res.json.data as T
}

/** JSON request to a running service. */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: { success: boolean; data?: unknown; code?: string } }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, json: (await res.json()) as { success: boolean; code?: string } }
}

/**
 * A login over HTTP with `password` that returns the access token; each call from an address of its own
 * (the service believes X-Forwarded-For from loopback), the per-IP login budget being 5 a minute.
 */
export function httpLogin(
  base: string,
  password: string,
): (tenantCode: string, email: string) => Promise<string> {
  let address = 10
  return async (tenantCode, email) =>
    dataOf<{ accessToken: string }>(
      await call(
        base,
        'POST',
        '/api/v1/login',
        { tenantCode, identifier: email, password },
        { 'x-forwarded-for': `198.51.100.${address++}` },
      ),
      `login ${email}`,
    ).accessToken
}
