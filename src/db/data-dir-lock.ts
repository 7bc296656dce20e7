/**
 * One owner per embedded-database directory. PGlite is a single-process database: two processes on one
 * directory each keep their own copy in memory and the last to stop overwrites the other's writes. So
 * every process that opens it (service, CLI, migrations, bench) first takes this lock.
 *
 * Why a pid file and not a lock library's mtime lease: a lease (proper-lockfile and the like) only turns
 * stale after its timeout, so a restart right after `kill -9` would be refused or have to wait. Like
 * PostgreSQL's own `postmaster.pid`, the file names its holder, and a holder that no longer runs (pid
 * gone, or reused by another process: its start time differs, or the machine rebooted) is stale and
 * taken over at once.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync, unlinkSync } from 'node:fs'
import { link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { basename, join, resolve } from 'node:path'

/** Who holds a data directory, as written in its lock file. */
export interface LockHolder {
  readonly pid: number
  /** Start time of the process in clock ticks since boot (Linux), to tell a reused pid apart. */
  readonly startTicks: string | null
  readonly bootId: string | null
  readonly hostname: string
  readonly since: string
  readonly command: string
}

/** A held data-directory lock. */
export interface DataDirLock {
  readonly file: string
  /** Removes the lock file; safe to call twice. */
  release(): Promise<void>
}

/** Thrown when another live process holds the directory; the message says who and what to do instead. */
export class DataDirLockedError extends Error {
  readonly code = 'EDATADIRLOCKED'
  constructor(
    readonly dir: string,
    readonly holder: LockHolder,
  ) {
    super(
      `the embedded database in ${dir} is in use by another process ` +
        `(pid ${holder.pid} on ${holder.hostname}, "${holder.command}", since ${holder.since}). ` +
        `PGlite allows one process per data directory. Stop that process first, or do this through ` +
        `the running service's API (see the README's "First steps"), or give each process its own ` +
        `DATA_DIR, or use DATABASE_URL=postgres://... to run several processes on one database.`,
    )
    this.name = 'DataDirLockedError'
  }
}

export const LOCK_FILE_NAME = 'tessera.lock'

// Why: a lock file naming this very process is stale (a former process of a container, whose pid was
// the same) unless this process took it itself, which only this set can tell.
const heldHere = new Map<string, LockHolder>()

/** Takes the lock on `dir` (created if missing), or throws DataDirLockedError at once. */
export async function lockDataDir(dir: string): Promise<DataDirLock> {
  const abs = resolve(dir)
  await mkdir(abs, { recursive: true, mode: 0o700 })
  const file = join(abs, LOCK_FILE_NAME)
  const mine = heldHere.get(file)
  if (mine) throw new DataDirLockedError(abs, mine)
  const me = selfHolder()
  // Why a few attempts: a stale lock moved aside may be taken by another starter between our steps.
  for (let attempt = 0; attempt < 5; attempt++) {
    if (await tryCreate(file, me)) return held(file, me)
    const holder = await readHolder(file)
    if (holder === undefined) continue // gone meanwhile: try again
    if (holder !== null && isRunning(holder)) throw new DataDirLockedError(abs, holder)
    await removeStale(file, holder)
  }
  throw new Error(`could not take the lock on ${abs}: it changed hands repeatedly; try again`)
}

/** True when the process a lock file names still runs (the same process, not a reused pid). */
export function isRunning(holder: LockHolder): boolean {
  if (holder.pid === process.pid) return false // we do not hold it yet, so it is a former process
  const boot = bootId()
  if (holder.bootId !== null && boot !== null && holder.bootId !== boot) return false
  try {
    process.kill(holder.pid, 0)
  } catch (err) {
    // EPERM: it exists but belongs to another user, so it runs.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  const ticks = startTicksOf(holder.pid)
  return holder.startTicks === null || ticks === null || ticks === holder.startTicks
}

// Why link(): the file appears atomically with its whole content, so a reader never sees it half-written.
async function tryCreate(file: string, me: LockHolder): Promise<boolean> {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  await writeFile(tmp, JSON.stringify(me), { mode: 0o600 })
  try {
    await link(tmp, file)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  } finally {
    await unlink(tmp).catch(() => undefined)
  }
}

/** The holder in `file`; null when unreadable as one (treated as stale); undefined when the file is gone. */
async function readHolder(file: string): Promise<LockHolder | null | undefined> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  try {
    const h = JSON.parse(text) as Partial<LockHolder>
    return typeof h.pid === 'number' && Number.isInteger(h.pid) && h.pid > 0
      ? {
          pid: h.pid,
          startTicks: typeof h.startTicks === 'string' ? h.startTicks : null,
          bootId: typeof h.bootId === 'string' ? h.bootId : null,
          hostname: typeof h.hostname === 'string' ? h.hostname : 'unknown host',
          since: typeof h.since === 'string' ? h.since : 'unknown time',
          command: typeof h.command === 'string' ? h.command : 'unknown command',
        }
      : null
  } catch {
    return null
  }
}

/**
 * Moves a stale lock aside. Why rename-then-check: two starters may both judge the same file stale; a
 * rename is atomic, and if what we moved is not the file we judged (another starter already replaced
 * it with a live lock), it goes back.
 */
async function removeStale(file: string, judged: LockHolder | null): Promise<void> {
  const aside = `${file}.stale.${process.pid}.${randomBytes(4).toString('hex')}`
  try {
    await rename(file, aside)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
    throw err
  }
  const moved = await readHolder(aside)
  const same =
    moved === null ||
    moved === undefined ||
    (judged !== null && moved.pid === judged.pid && moved.since === judged.since)
  if (!same) await link(aside, file).catch(() => undefined)
  await unlink(aside).catch(() => undefined)
}

function held(file: string, me: LockHolder): DataDirLock {
  heldHere.set(file, me)
  let released = false
  const releaseSync = (): void => {
    if (released) return
    released = true
    heldHere.delete(file)
    if (ownedBy(file, me)) {
      try {
        unlinkSync(file)
      } catch {
        // Already gone: nothing to release.
      }
    }
  }
  // Why: a process.exit() on a shutdown timeout skips close(); the next start would take over anyway,
  // but a clean exit should leave no file behind.
  process.once('exit', releaseSync)
  return {
    file,
    release: async () => {
      process.removeListener('exit', releaseSync)
      releaseSync()
    },
  }
}

function ownedBy(file: string, me: LockHolder): boolean {
  try {
    const h = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockHolder>
    return h.pid === me.pid && h.since === me.since
  } catch {
    return false
  }
}

function selfHolder(): LockHolder {
  return {
    pid: process.pid,
    startTicks: startTicksOf(process.pid),
    bootId: bootId(),
    hostname: hostname(),
    since: new Date().toISOString(),
    // Why the script's name only: arguments may hold secrets (`cli ... --admin-password`), and this
    // text is written to disk and shown to whoever starts a second process.
    command: basename(process.argv[1] ?? 'node'),
  }
}

/** Field 22 of /proc/<pid>/stat (start time); null off Linux or when unreadable. */
function startTicksOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Why after the last ')': the command name in parentheses may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return fields[19] ?? null
  } catch {
    return null
  }
}

function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
  } catch {
    return null
  }
}
