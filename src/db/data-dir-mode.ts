// The embedded database's files are the service's secrets at rest: outside production the generated JWT
// secret and secrets key are rows in it, and its WAL holds them too. So DATA_DIR and everything in it is
// for the service's user alone, whatever the umask it was started with.
//
// Why a umask and a pass of chmod both: PGlite lays out a new data directory from an image it carries and
// gives those files mode 0666 explicitly (measured: 968 of them, under umask 022 and 077 alike), so no
// umask reaches them; the files PostgreSQL creates afterwards (WAL segments, new relations) are created
// through the process's umask, so 077 makes them 0600 from their first byte. An existing directory of
// an earlier version is tightened by the same pass.
import { chmod, lstat, mkdir, readdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'

/** Nothing for group and others: new files 0600, new directories 0700. */
export const PRIVATE_UMASK = 0o077

/** The part of a logger this module uses. */
export interface DataDirLogger {
  warn(obj: object, msg: string): void
}

/**
 * Makes every file this process creates from now on private (process.umask, process-wide: called only
 * when the service runs on PGlite on disk, whose process writes no other files), creates `dir` with mode
 * 0700 if missing, and warns when an existing `dir` lets group or others in.
 */
export async function prepareDataDir(dir: string, log?: DataDirLogger): Promise<void> {
  process.umask(PRIVATE_UMASK)
  const abs = resolve(dir)
  let mode: number
  try {
    mode = (await lstat(abs)).mode & 0o777
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    await mkdir(abs, { recursive: true, mode: 0o700 })
    return
  }
  // Why warn and not chmod: the directory is the operator's (a volume, a mount point); its files are ours.
  if ((mode & 0o077) !== 0) {
    log?.warn(
      { dataDir: abs, mode: `0${mode.toString(8)}` },
      `DATA_DIR is readable by users other than the service's (mode 0${mode.toString(8)}); ` +
        'its files hold secrets: chmod 700 it',
    )
  }
}

/**
 * Takes every permission of group and others off each file and directory below `dir` (not `dir` itself,
 * nor what a symbolic link points to). Returns how many it changed.
 */
export async function tightenDataDir(dir: string): Promise<number> {
  let changed = 0
  const walk = async (d: string): Promise<void> => {
    for (const entry of await readdir(d, { withFileTypes: true })) {
      const path = join(d, entry.name)
      if (entry.isSymbolicLink()) continue
      try {
        const mode = (await lstat(path)).mode & 0o7777
        if ((mode & 0o077) !== 0) {
          await chmod(path, mode & ~0o077)
          changed++
        }
        if (entry.isDirectory()) await walk(path)
      } catch (err) {
        // Why: a file the database removed meanwhile (a recycled WAL segment) needs nothing.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      }
    }
  }
  await walk(resolve(dir))
  return changed
}
