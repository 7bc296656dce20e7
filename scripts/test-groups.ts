/**
 * Splits the test files of one `make tap` pass into what tap runs: the files of test/run-alone.txt, each in a
 * process of its own, and groups of the rest, in .tap/groups/<pass>/: each a runner that imports its files in
 * turn (test/helpers/group.ts says why). Prints the runners' paths, to hand to tap; exits 1, printing nothing,
 * when a file that must run alone is not listed so.
 *
 * Usage: tsx scripts/test-groups.ts <pass name> <groups> <test file>...
 */
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, join, relative } from 'node:path'

const root = new URL('..', import.meta.url).pathname
const [pass, count, ...files] = process.argv.slice(2)
const groups = Number(count)
if (!pass || !/^[a-z]+$/.test(pass) || !Number.isInteger(groups) || groups < 1) {
  console.error('usage: tsx scripts/test-groups.ts <pass name> <groups> <test file>...')
  process.exit(2)
}

const aloneList = readFileSync(join(root, 'test/run-alone.txt'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'))
const alone = new Set(aloneList)

// A root-level t.setTimeout sets the whole process's timeout: in a group it would cut short or stretch the
// other files' time. Such a file runs alone.
const timed = files.filter(
  (f) => !alone.has(f) && /^t\.setTimeout\(/m.test(readFileSync(join(root, f), 'utf8')),
)
if (timed.length > 0) {
  console.error(
    `test-groups: a root-level t.setTimeout needs a process of its own; list in test/run-alone.txt:`,
  )
  for (const f of timed) console.error(`  ${f}`)
  process.exit(1)
}

// A file's size stands for how long it runs: rough, but it needs no record of earlier runs, and the files
// that would break it most (long waits in few lines) run alone.
const weight = (file: string) => statSync(join(root, file)).size
const grouped = files.filter((f) => !alone.has(f)).sort((a, b) => weight(b) - weight(a))

// Longest processing time first: each file, heaviest first, joins the lightest group so far.
const buckets = Array.from({ length: Math.min(groups, grouped.length) }, () => ({
  weight: 0,
  files: [] as string[],
}))
for (const file of grouped) {
  const lightest = buckets.reduce((a, b) => (b.weight < a.weight ? b : a))
  lightest.files.push(file)
  lightest.weight += weight(file)
}

const dir = join(root, '.tap/groups', pass)
rmSync(dir, { recursive: true, force: true })
mkdirSync(dir, { recursive: true })
const helper = relative(dir, join(root, 'test/helpers/group.js'))

// tap starts files in the order of their names, so each runner's name begins with its place: the alone files
// first (the suite's longest, in run-alone.txt's order), then the groups, heaviest first.
const runs = [
  ...aloneList.filter((f) => files.includes(f)).map((f) => ({ name: basename(f, '.test.ts'), files: [f] })),
  ...buckets
    .sort((a, b) => b.weight - a.weight)
    .map((bucket, i) => ({ name: `group-${i + 1}`, files: bucket.files.sort() })),
]
runs.forEach((run, i) => {
  const file = join(dir, `${String(i + 1).padStart(2, '0')}-${run.name}.test.mjs`)
  writeFileSync(
    file,
    `// Written by scripts/test-groups.ts for make tap; not committed.\n` +
      `import { runFiles } from '${helper}'\n` +
      `await runFiles(${JSON.stringify(run.files, null, 2)})\n`,
  )
  console.log(relative(root, file))
})
