import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import t from 'tap'

// make tap runs most test files in groups (scripts/test-groups.ts writes the runners, test/helpers/group.ts runs
// them). These check the two promises the grouping rests on: every file runs exactly once, the alone ones by
// themselves and first; and a file in a group behaves as alone, its root teardowns run before the next file.

const ROOT = resolve(import.meta.dirname, '../..')
const TSX = join(ROOT, 'node_modules/.bin/tsx')
const scratch = join(ROOT, `.tap/test-groups-${process.pid}`)
mkdirSync(scratch, { recursive: true })
t.teardown(() => rmSync(scratch, { recursive: true, force: true }))

const listed = (file: string) =>
  readFileSync(join(ROOT, file), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))

/** The members of each runner scripts/test-groups.ts wrote, in its printed order. */
function groups(pass: string, files: string[]): string[][] {
  const out = execFileSync(TSX, ['scripts/test-groups.ts', pass, '4', ...files], {
    cwd: ROOT,
    encoding: 'utf8',
  })
  return out
    .trim()
    .split('\n')
    .map((runner) =>
      JSON.parse(/runFiles\((\[[\s\S]*\])\)/.exec(readFileSync(join(ROOT, runner), 'utf8'))![1]!),
    )
}

t.test(
  'test-groups: every file runs once; the alone ones each in a runner of their own, first, in their order',
  async (t) => {
    const files = execFileSync('npx', ['tap', 'list'], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n')
    const runs = groups('selftest', files)
    t.teardown(() => rmSync(join(ROOT, '.tap/groups/selftest'), { recursive: true, force: true }))
    t.same(runs.flat().sort(), [...files].sort(), 'each file exactly once')
    const alone = listed('test/run-alone.txt').filter((f) => files.includes(f))
    t.same(
      runs.slice(0, alone.length),
      alone.map((f) => [f]),
      'the alone files first, one per runner',
    )
    t.equal(runs.length, alone.length + 4, 'then the four groups asked for')
    t.notOk(
      runs
        .slice(alone.length)
        .flat()
        .some((f) => alone.includes(f)),
      'no alone file in a group',
    )
  },
)

t.test(
  'test-groups: a grouped file that sets the root timeout is refused, and nothing is printed',
  async (t) => {
    const file = `.tap/test-groups-${process.pid}/timed.test.ts`
    writeFileSync(join(ROOT, file), "import t from 'tap'\nt.setTimeout(1000)\n")
    const run = spawnSync(TSX, ['scripts/test-groups.ts', 'selftest', '2', file], {
      cwd: ROOT,
      encoding: 'utf8',
    })
    t.teardown(() => rmSync(join(ROOT, '.tap/groups/selftest'), { recursive: true, force: true }))
    t.equal(run.status, 1)
    t.equal(run.stdout, '')
    t.match(run.stderr, /run-alone\.txt[\s\S]*timed\.test\.ts/)
  },
)

t.test('runFiles: a file runs its tests, then its root teardowns, before the next file starts', async (t) => {
  const log = join(scratch, 'log.txt')
  const member = (name: string) => {
    const file = join(scratch, `${name}.test.ts`)
    writeFileSync(
      file,
      [
        "import { appendFileSync } from 'node:fs'",
        "import t from 'tap'",
        `appendFileSync(${JSON.stringify(log)}, '${name} import\\n')`,
        `t.teardown(() => appendFileSync(${JSON.stringify(log)}, '${name} teardown\\n'))`,
        `t.test('${name}', async () => { appendFileSync(${JSON.stringify(log)}, '${name} test\\n') })`,
      ].join('\n'),
    )
    return file.slice(ROOT.length + 1)
  }
  const runner = join(scratch, 'runner.test.mjs')
  writeFileSync(
    runner,
    `import { runFiles } from '../../test/helpers/group.js'\n` +
      `await runFiles(${JSON.stringify([member('a'), member('b')])})\n`,
  )
  const run = spawnSync(process.execPath, ['--import=./scripts/test-loader.mjs', runner], {
    cwd: ROOT,
    encoding: 'utf8',
  })
  t.equal(run.status, 0, run.stdout + run.stderr)
  t.same(readFileSync(log, 'utf8').trim().split('\n'), [
    'a import',
    'a test',
    'a teardown',
    'b import',
    'b test',
    'b teardown',
  ])
})
