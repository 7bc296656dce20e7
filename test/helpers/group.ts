import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { setRunningTestFile } from './db.js'

// `make tap` runs most test files in groups: one process imports several files, one after another, instead of
// one process per file. Why: a test process spends about 3 s of CPU before its first test (Node and tap, the
// service's modules, the first PGlite open, the JIT's warm-up), and the suite ran some 210 of them per make test.
// A file behaves as it does alone: its root-level teardowns (buildTestApp(t) at the top of a file) run when its
// own tests have ended, not when the process exits, so the next file starts with nothing of it left open.

const ROOT = resolve(import.meta.dirname, '../..')

type Teardown = () => unknown

/** Imports each test file in turn; a file's root teardowns run (as a test of their own) right after its tests. */
export async function runFiles(files: readonly string[]): Promise<void> {
  // Each file can take tap's per-file timeout; the group as a whole gets the sum.
  t.setTimeout(files.length * 120_000)
  const root = t as unknown as { teardown(fn: Teardown): void }
  const ownTeardown = root.teardown
  try {
    for (const file of files) {
      const pending: Teardown[] = []
      root.teardown = (fn: Teardown) => void pending.push(fn)
      setRunningTestFile(file)
      await import(pathToFileURL(resolve(ROOT, file)).href)
      await t.test(`${file}: teardown`, async () => {
        // Last registered, first run: as tap runs teardowns.
        for (const fn of pending.reverse()) await fn()
      })
    }
  } finally {
    root.teardown = ownTeardown
  }
}
