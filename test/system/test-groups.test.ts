import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import t from 'tap'

// make tap runs most test files in a few long processes (scripts/test-groups.ts writes the runners and the
// queue, test/helpers/group.ts runs them). These check what that rests on: every file runs exactly once, the
// alone ones by themselves and first; a file behaves as alone, its root teardowns run before the next file; a
// file that fails to load does not take the others with it.

const ROOT = resolve(import.meta.dirname, '../..')
const TSX = join(ROOT, 'node_modules/.bin/tsx')
const SCRATCH = `.tap/test-groups-${process.pid}`
mkdirSync(join(ROOT, SCRATCH), { recursive: true })
t.teardown(() => rmSync(join(ROOT, SCRATCH), { recursive: true, force: true }))
t.teardown(() => rmSync(join(ROOT, '.tap/groups/selftest'), { recursive: true, force: true }))

const listed = (file: string) =>
  readFileSync(join(ROOT, file), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))

/** A test file in the scratch folder whose `say(text)` appends a line to `log`; its path from the root. */
function member(name: string, log: string, lines: string[]): string {
  const file = `${SCRATCH}/${name}.test.ts`
  const head = [
    "import { appendFileSync } from 'node:fs'",
    "import t from 'tap'",
    `const say = (text: string) => appendFileSync(${JSON.stringify(log)}, text + '\\n')`,
  ]
  writeFileSync(join(ROOT, file), [...head, ...lines].join('\n'))
  return file
}

/** Runs a written runner as tap would, in a plain Node process with the tests' loader. */
const nodeArgs = (runner: string) => ['--import=./scripts/test-loader.mjs', runner]

t.test(
  'test-groups: every file once; the alone ones each in a runner of their own, first, in their order',
  async (t) => {
    const files = execFileSync('npx', ['tap', 'list'], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n')
    const runners = execFileSync(TSX, ['scripts/test-groups.ts', 'selftest', '3', ...files], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
    const alone = listed('test/run-alone.txt').filter((f) => files.includes(f))
    const calls = runners.map((r) => /await (run\w+\(.*)\)/s.exec(readFileSync(join(ROOT, r), 'utf8'))![1]!)
    t.same(
      calls.slice(0, alone.length),
      alone.map((f) => `runFiles(${JSON.stringify([f])}`),
      'the alone files first, one a runner',
    )
    t.same(calls.slice(alone.length), Array(3).fill('runQueue("selftest"'), 'then three runners of the queue')
    t.same([...runners].sort(), runners, 'named in the order tap is to start them')
    const queue = JSON.parse(readFileSync(join(ROOT, '.tap/groups/selftest/queue.json'), 'utf8')) as string[]
    t.same([...queue, ...alone].sort(), [...files].sort(), 'each file once: alone or in the queue')
  },
)

t.test('runFiles: a file runs its tests, then its root teardowns, before the next file starts', async (t) => {
  const log = join(ROOT, SCRATCH, 'order.txt')
  const file = (name: string) =>
    member(name, log, [
      `say('${name} import')`,
      `t.teardown(() => say('${name} teardown'))`,
      `t.test('${name}', async () => { say('${name} test') })`,
    ])
  const runner = join(ROOT, SCRATCH, 'order.test.mjs')
  writeFileSync(
    runner,
    `import { runFiles } from '../../test/helpers/group.js'\n` +
      `await runFiles(${JSON.stringify([file('a'), file('b')])})\n`,
  )
  const run = spawnSync(process.execPath, nodeArgs(runner), { cwd: ROOT, encoding: 'utf8' })
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

t.test(
  'runFiles: a file that throws while loading fails; its teardowns run, and so does the next file',
  async (t) => {
    const log = join(ROOT, SCRATCH, 'broken.txt')
    const broken = member('broken', log, [
      `t.teardown(() => say('broken teardown'))`,
      "throw new Error('broken at load')",
    ])
    const next = member('next', log, [`t.test('next', async () => { say('next test') })`])
    const runner = join(ROOT, SCRATCH, 'broken.test.mjs')
    writeFileSync(
      runner,
      `import { runFiles } from '../../test/helpers/group.js'\n` +
        `await runFiles(${JSON.stringify([broken, next])})\n`,
    )
    const run = spawnSync(process.execPath, nodeArgs(runner), { cwd: ROOT, encoding: 'utf8' })
    t.equal(run.status, 1, 'the process fails')
    t.match(run.stdout, /not ok \d+ - \.tap\/test-groups-\d+\/broken\.test\.ts: teardown/)
    t.match(run.stdout + run.stderr, /broken at load/)
    t.same(readFileSync(log, 'utf8').trim().split('\n'), ['broken teardown', 'next test'])
  },
)

t.test('runQueue: runners started together share the queue; each file runs once', async (t) => {
  const log = join(ROOT, SCRATCH, 'queue.txt')
  const files = Array.from({ length: 8 }, (_, i) =>
    member(`q${i}`, log, [
      `t.test('q${i}', async () => { await new Promise((r) => setTimeout(r, 50)); say('q${i} ' + process.pid) })`,
    ]),
  )
  const out = execFileSync(TSX, ['scripts/test-groups.ts', 'selftest', '3', ...files], {
    cwd: ROOT,
    encoding: 'utf8',
  })
  const runners = out.trim().split('\n')
  t.equal(runners.length, 3)
  const codes = await Promise.all(
    runners.map(
      (r) =>
        new Promise<number | null>((done) => {
          const child = spawn(process.execPath, nodeArgs(r), { cwd: ROOT, stdio: 'ignore' })
          child.on('exit', done)
        }),
    ),
  )
  t.same(codes, [0, 0, 0])
  const lines = readFileSync(log, 'utf8').trim().split('\n')
  t.same(lines.map((l) => l.split(' ')[0]).sort(), files.map((_, i) => `q${i}`).sort(), 'each file once')
  t.equal(readdirSync(join(ROOT, '.tap/groups/selftest/claims')).length, 8, 'each claimed once')
  t.ok(new Set(lines.map((l) => l.split(' ')[1])).size > 1, 'by more than one process')
})
