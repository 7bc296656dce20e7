import { mkdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { setRunningTestFile } from './db.js'

// `make tap` runs most test files in a few long processes instead of one process per file. Why: a test process
// spends about 3 s of CPU before its first test (Node and tap, the service's modules, the first PGlite open, the
// JIT's warm-up), and the suite ran some 210 of them per make test. A file behaves as it does alone: its
// root-level teardowns (buildTestApp(t) at the top of a file) run when its own tests have ended, not when the
// process exits, so the next file starts with nothing of it left open.

const ROOT = resolve(import.meta.dirname, '../..')

/** How long one file may take, counted afresh for each file: tap's per-file timeout (.taprc), which tap hands
 * every test process as TAP_TIMEOUT in seconds; tap's own default when it is not there. */
const FILE_TIMEOUT_MS = Number(process.env.TAP_TIMEOUT ?? 30) * 1000

type Teardown = () => unknown

/** Runs one test file in this process: its tests, then its root teardowns (as a test of their own). */
async function runFile(file: string): Promise<void> {
  t.setTimeout(FILE_TIMEOUT_MS)
  // The root test's own method is replaced while the file loads and runs (the root is tap's plugin proxy,
  // whose properties can be set like a plain object's).
  const ownTeardown = t.teardown
  const pending: Teardown[] = []
  t.teardown = (fn: Teardown) => void pending.push(fn)
  try {
    setRunningTestFile(file)
    // A file that throws while loading fails its teardown test below, after what it opened is closed, and the
    // process goes on with the next file.
    const failure = await import(pathToFileURL(resolve(ROOT, file)).href).then(
      () => undefined,
      (err: unknown) => ({ err }),
    )
    await t.test(`${file}: teardown`, async () => {
      // Last registered, first run: as tap runs teardowns.
      for (const fn of pending.reverse()) await fn()
      if (failure) throw failure.err
    })
  } finally {
    t.teardown = ownTeardown
  }
}

/** Runs the given test files one after another in this process (a file of test/run-alone.txt, alone). */
export async function runFiles(files: readonly string[]): Promise<void> {
  for (const file of files) await runFile(file)
}

/**
 * Runs files of a shared queue (.tap/groups/<pass>/queue.json, heaviest first) until none is left. Several
 * processes run it at once, each claiming the next file by creating its claim directory, which only one of
 * them can: so every file runs once, and the processes end together however long each file takes.
 */
export async function runQueue(pass: string): Promise<void> {
  const dir = join(ROOT, '.tap/groups', pass)
  const queue = JSON.parse(readFileSync(join(dir, 'queue.json'), 'utf8')) as string[]
  for (const [i, file] of queue.entries()) {
    try {
      mkdirSync(join(dir, 'claims', String(i)))
    } catch (err) {
      if ((err as { code?: unknown }).code === 'EEXIST') continue
      throw err
    }
    await runFile(file)
  }
}
