import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

// The order among modules (ARCHITECTURE.md, "The order among modules"): a module's files import the
// services and rules of modules in lower tiers only; any module may call any module's queries files (the
// floor every service stands on: the table-owners rule makes them the one way to another module's table);
// a queries file imports only the floor below it (db, lib, security, errors, config, generated, other
// queries files, and types from context.ts). The folder cycles the floor leaves are named in
// ARCHITECTURE.md, and this test fails on one that is not, or on a named one that is gone.

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const doc = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8')

/** The section of ARCHITECTURE.md under `heading`, up to the next `## `. */
function section(heading: string): string {
  const start = doc.indexOf(heading)
  if (start === -1) throw new Error(`ARCHITECTURE.md has no "${heading}"`)
  const end = doc.indexOf('\n## ', start + 1)
  return doc.slice(start, end === -1 ? undefined : end)
}

/** module → tier, from the rows `| N | \`a\`, \`b\` | ... |` of the order's table. */
function tiersFromDoc(): Map<string, number> {
  const out = new Map<string, number>()
  for (const [, tier = '', names = ''] of section('## The order among modules').matchAll(
    /^\|\s*(\d+)\s*\|([^|]+)\|/gm,
  ))
    for (const [, name = ''] of names.matchAll(/`([a-z-]+)`/g)) out.set(name, Number(tier))
  return out
}

/** The folder cycles ARCHITECTURE.md names: its lines `- \`a\` ↔ \`b\`: why`, as sorted `a↔b` pairs. */
function namedCycles(): string[] {
  return [...section('## The order among modules').matchAll(/^- `([a-z-]+)` ↔ `([a-z-]+)`:/gm)]
    .map(([, a = '', b = '']) => [a, b].sort().join('↔'))
    .sort()
}

/** Every .ts file below `dir`. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : path.endsWith('.ts') ? [path] : []
  })
}

const isQueries = (path: string) => /(^|\/)(queries|[a-z-]+-queries)\.[jt]s$|\/queries\//.test(path)
const moduleOf = (path: string) => /^src\/modules\/([a-z-]+)\//.exec(path)?.[1]

interface Breach {
  file: string
  rule: 'climb' | 'queries-import' | 'unranked'
  target: string
}

/** The relative imports of a source text: each target resolved from `file`, and whether it is type-only. */
function importsOf(file: string, text: string): { target: string; typeOnly: boolean }[] {
  const out: { target: string; typeOnly: boolean }[] = []
  for (const [, typeOnly, spec = ''] of text.matchAll(
    /^\s*(?:import|export)\s+(type\s+)?[^'"]*?from\s+'([^']+)'/gm,
  ))
    if (spec.startsWith('.'))
      out.push({ target: normalize(join(dirname(file), spec)), typeOnly: Boolean(typeOnly) })
  return out
}

const FLOOR = /^(src\/db\/|src\/lib\/|src\/security\/|src\/errors\.js$|src\/config\.js$|generated\/)/

/** What one file of src/modules breaks of the order, given the tiers. */
function findBreaches(file: string, text: string, tiers: Map<string, number>): Breach[] {
  const from = moduleOf(file)
  if (from === undefined) return []
  const out: Breach[] = []
  for (const { target, typeOnly } of importsOf(file, text)) {
    const to = moduleOf(target)
    if (isQueries(file)) {
      const allowed = FLOOR.test(target) || isQueries(target) || (typeOnly && target === 'src/context.js')
      if (!allowed) out.push({ file, rule: 'queries-import', target })
      continue
    }
    if (to === undefined || to === from || isQueries(target)) continue
    const a = tiers.get(from)
    const b = tiers.get(to)
    if (a === undefined || b === undefined) out.push({ file, rule: 'unranked', target })
    else if (b >= a) out.push({ file, rule: 'climb', target })
  }
  return out
}

/** The pairs of module folders that import each other (through any file), sorted. */
function folderCycles(sources: [string, string][]): string[] {
  const edges = new Set<string>()
  for (const [file, text] of sources) {
    const from = moduleOf(file)
    for (const { target } of importsOf(file, text)) {
      const to = moduleOf(target)
      if (from && to && from !== to) edges.add(`${from}>${to}`)
    }
  }
  const out = new Set<string>()
  for (const edge of edges) {
    const [a = '', b = ''] = edge.split('>')
    if (edges.has(`${b}>${a}`)) out.add([a, b].sort().join('↔'))
  }
  return [...out].sort()
}

const sources: [string, string][] = filesUnder(join(ROOT, 'src/modules'))
  .filter((path) => !path.endsWith('src/modules/index.ts'))
  .map((path) => [relative(ROOT, path), readFileSync(path, 'utf8')])

t.test('module order: every module has a tier, and no file imports above its own', async (t) => {
  const tiers = tiersFromDoc()
  const folders = new Set(sources.map(([file]) => moduleOf(file)))
  t.same(
    [...folders].filter((m) => m !== undefined && !tiers.has(m)),
    [],
    'every module folder is in the table',
  )
  t.same(
    sources.flatMap(([file, text]) => findBreaches(file, text, tiers)),
    [],
    'no climb, and queries files import only the floor',
  )
})

t.test('module order: the folder cycles are exactly the ones ARCHITECTURE.md names', async (t) => {
  t.same(folderCycles(sources), namedCycles())
})

t.test('module order: the check finds what it looks for', async (t) => {
  const tiers = new Map([
    ['audit', 1],
    ['sessions', 5],
    ['otp', 6],
  ])
  const rules = (file: string, text: string) => findBreaches(file, text, tiers).map((b) => b.rule)
  t.same(rules('src/modules/sessions/open.ts', `import { x } from '../otp/login-step.js'`), ['climb'])
  t.same(rules('src/modules/otp/login-step.ts', `import { x } from '../sessions/complete-login.js'`), [])
  t.same(rules('src/modules/sessions/open.ts', `import { x } from '../otp/queries.js'`), [], 'the floor')
  t.same(
    rules('src/modules/sessions/queries.ts', `import { x } from './refresh-token.js'`),
    ['queries-import'],
    'a queries file that reaches a rule',
  )
  t.same(rules('src/modules/sessions/queries.ts', `import type { X } from '../../context.js'`), [])
  t.same(rules('src/modules/sessions/queries.ts', `import { X } from '../../context.js'`), ['queries-import'])
  t.same(rules('src/modules/otp/service.ts', `import { x } from '../mystery/service.js'`), ['unranked'])
  t.same(
    folderCycles([
      ['src/modules/otp/service.ts', `import { a } from '../sessions/queries.js'`],
      ['src/modules/sessions/open.ts', `import { b } from '../otp/queries.js'`],
      ['src/modules/audit/write.ts', `import { c } from '../otp/queries.js'`],
    ]),
    ['otp↔sessions'],
  )
})
