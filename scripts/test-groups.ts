/**
 * Splits the test files of one `make tap` pass into what tap runs, in .tap/groups/<pass>/: a runner for each file
 * of test/run-alone.txt, which runs it in a process of its own, and <runners> runners that share a queue of the
 * rest, each taking the next file until none is left (test/helpers/group.ts says why). Prints the runners'
 * paths, to hand to tap.
 *
 * Usage: tsx scripts/test-groups.ts <pass name> <runners> <test file>...
 */
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, join, relative } from 'node:path'

const root = new URL('..', import.meta.url).pathname
const [pass, count, ...files] = process.argv.slice(2)
const runners = Number(count)
if (!pass || !/^[a-z]+$/.test(pass) || !Number.isInteger(runners) || runners < 1) {
  console.error('usage: tsx scripts/test-groups.ts <pass name> <runners> <test file>...')
  process.exit(2)
}

const aloneList = readFileSync(join(root, 'test/run-alone.txt'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'))
const alone = new Set(aloneList)

// A file's size stands for how long it runs: rough, but it needs no record of earlier runs. It only orders
// the queue (heaviest first, so that no long file starts last); the runners share the queue, so the processes
// end together whatever the estimate.
const weight = (file: string) => statSync(join(root, file)).size
const queue = files.filter((f) => !alone.has(f)).sort((a, b) => weight(b) - weight(a))

const dir = join(root, '.tap/groups', pass)
rmSync(dir, { recursive: true, force: true })
mkdirSync(join(dir, 'claims'), { recursive: true })
writeFileSync(join(dir, 'queue.json'), JSON.stringify(queue, null, 2))
const helper = relative(dir, join(root, 'test/helpers/group.js'))

// tap starts files in the order of their names, so each runner's name begins with its place: the alone files
// first (the suite's longest, in run-alone.txt's order), then the queue's runners.
const runs = [
  ...aloneList
    .filter((f) => files.includes(f))
    .map((f) => ({ name: basename(f, '.test.ts'), call: `runFiles(${JSON.stringify([f])})` })),
  ...Array.from({ length: queue.length > 0 ? runners : 0 }, (_, i) => ({
    name: `queue-${i + 1}`,
    call: `runQueue(${JSON.stringify(pass)})`,
  })),
]
runs.forEach((run, i) => {
  const file = join(dir, `${String(i + 1).padStart(2, '0')}-${run.name}.test.mjs`)
  writeFileSync(
    file,
    `// Written by scripts/test-groups.ts for make tap; not committed.\n` +
      `import { runFiles, runQueue } from '${helper}'\n` +
      `await ${run.call}\n`,
  )
  console.log(relative(root, file))
})
