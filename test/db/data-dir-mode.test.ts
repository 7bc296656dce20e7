import t from 'tap'
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildAppOn } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import { platformKey } from '../helpers/fixtures.js'
import { openDatabase } from '../../src/db/connect.js'
import { tightenDataDir } from '../../src/db/data-dir-mode.js'

// Contract section 22, "The embedded database's files": DATA_DIR is 0700, its files are the service
// user's alone whatever the umask, and a directory others can read is reported at start.

/** Every path below `dir` whose mode gives group or others anything, with its mode. */
function loose(dir: string): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name)
      const mode = lstatSync(p).mode & 0o777
      if (mode & 0o077) out.push(`${p.slice(dir.length)} 0${mode.toString(8)}`)
      if (e.isDirectory()) walk(p)
    }
  }
  walk(dir)
  return out
}

const modeOf = (p: string) => lstatSync(p).mode & 0o777

/** A logger that keeps its warnings. */
function warnings() {
  const seen: { obj: object; msg: string }[] = []
  return { seen, warn: (obj: object, msg: string) => void seen.push({ obj, msg }) }
}

t.test('DATA_DIR under umask 022: after start and some writes, 0700 and no file for others', async (t) => {
  const parent = mkdtempSync(join(tmpdir(), 'tessera-mode-'))
  t.teardown(() => rmSync(parent, { recursive: true, force: true }))
  const before = process.umask(0o022)
  t.teardown(() => process.umask(before))
  const dataDir = join(parent, 'data')
  const lines: string[] = []
  const app = await buildAppOn(
    { DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' },
    { logStream: { write: (l: string) => void lines.push(l) } },
  )
  let closed = false
  t.teardown(() => (closed ? undefined : app.close()))
  // Writes: a tenant (rows, indexes, the WAL) through the API.
  const res = await call(app, 'createTenant', platformKey, { body: { code: 'mode-test', name: 'Mode test' } })
  t.equal(res.status, 201)
  t.same(loose(dataDir), [], 'while running: nothing below DATA_DIR is open to group or others')
  await app.close()
  closed = true
  t.equal(modeOf(dataDir), 0o700, 'DATA_DIR was created 0700')
  t.same(loose(dataDir), [], 'after a stop: the same')
  t.notMatch(lines.join(''), /DATA_DIR is readable/, 'a directory of our own making draws no warning')
  t.ok(readdirSync(join(dataDir, 'pgdata')).length > 10, 'the database is really there')
})

t.test('an existing DATA_DIR that others can read: a warning at start, its files tightened', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-mode-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const before = process.umask(0o022)
  t.teardown(() => process.umask(before))
  chmodSync(dataDir, 0o755)
  // What an earlier version left: PGlite's files at 0666, directories at 0755.
  mkdirSync(join(dataDir, 'pgdata', 'old'), { recursive: true, mode: 0o755 })
  writeFileSync(join(dataDir, 'pgdata', 'old', 'file'), 'x', { mode: 0o666 })
  chmodSync(join(dataDir, 'pgdata', 'old', 'file'), 0o666)
  const log = warnings()
  const opened = await openDatabase(undefined, { dataDir, logger: log })
  t.teardown(() => opened.close())
  t.equal(log.seen.length, 1, 'one warning')
  t.match(log.seen[0], {
    obj: { dataDir, mode: '0755' },
    msg: /DATA_DIR is readable by users other than the service's \(mode 0755\)/,
  })
  t.equal(modeOf(dataDir), 0o755, "the directory is the operator's: reported, not changed")
  t.same(loose(dataDir), [], 'everything in it is tightened')
})

t.test('tightenDataDir: leaves what a symbolic link points to alone', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-mode-'))
  const outside = mkdtempSync(join(tmpdir(), 'tessera-mode-outside-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
    rmSync(outside, { recursive: true, force: true })
  })
  writeFileSync(join(outside, 'theirs'), 'x')
  chmodSync(join(outside, 'theirs'), 0o644)
  const { symlinkSync } = await import('node:fs')
  symlinkSync(join(outside, 'theirs'), join(dir, 'link'))
  writeFileSync(join(dir, 'mine'), 'x')
  chmodSync(join(dir, 'mine'), 0o640)
  t.equal(await tightenDataDir(dir), 1, 'one file changed')
  t.equal(modeOf(join(dir, 'mine')), 0o600)
  t.equal(modeOf(join(outside, 'theirs')), 0o644, 'the link was not followed')
})
