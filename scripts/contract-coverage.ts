/**
 * Contract coverage: which (operationId, status) pairs of the document the test suite exercised.
 * The contract guard (test/helpers/contract-guard.ts) writes the pairs each test process saw into
 * CONTRACT_COVERAGE_DIR; this adds them up, prints a table, and exits 1 when a status the document
 * declares for an operation was never answered by any test, unless test/contract-coverage-exceptions.json
 * lists the pair (or `* <status>`, or `<operationId> *`) with a reason.
 *
 * Usage: tsx scripts/contract-coverage.ts [coverage dir] (default .tap/contract-coverage)
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

interface Document {
  paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, unknown> }>>
}

const root = new URL('..', import.meta.url).pathname
const dir = process.argv[2] ?? join(root, '.tap/contract-coverage')
const exceptionsFile = join(root, 'test/contract-coverage-exceptions.json')

const doc = JSON.parse(readFileSync(join(root, 'generated/openapi.json'), 'utf8')) as Document
const declared = new Map<string, string[]>()
for (const methods of Object.values(doc.paths)) {
  for (const op of Object.values(methods)) {
    if (op.operationId && op.responses) declared.set(op.operationId, Object.keys(op.responses).sort())
  }
}

if (!existsSync(dir) || readdirSync(dir).length === 0) {
  console.error(`contract coverage: no records in ${dir}; run the suite with CONTRACT_COVERAGE_DIR set`)
  process.exit(1)
}
const exercised = new Set<string>()
for (const f of readdirSync(dir)) {
  for (const pair of JSON.parse(readFileSync(join(dir, f), 'utf8')) as string[]) exercised.add(pair)
}

const exceptions = JSON.parse(readFileSync(exceptionsFile, 'utf8')) as Record<string, string>
const problems: string[] = []
for (const [key, reason] of Object.entries(exceptions)) {
  if (key.startsWith('//')) continue
  const [op, status] = key.split(' ')
  if (!op || !status || typeof reason !== 'string' || reason.trim().length < 10) {
    problems.push(`exception "${key}" needs the form "<operationId|*> <status|*>" and a reason`)
  } else if (op !== '*' && !declared.has(op)) problems.push(`exception "${key}" names no operation`)
}
const excuse = (op: string, status: string): string | undefined =>
  exceptions[`${op} ${status}`] ?? exceptions[`* ${status}`] ?? exceptions[`${op} *`]

const rows: string[][] = []
let total = 0
let covered = 0
let excused = 0
const missing: string[] = []
for (const [op, statuses] of [...declared].sort(([a], [b]) => a.localeCompare(b))) {
  const hit: string[] = []
  const ok: string[] = []
  const miss: string[] = []
  for (const s of statuses) {
    total++
    if (exercised.has(`${op} ${s}`)) {
      covered++
      hit.push(s)
    } else if (excuse(op, s) !== undefined) {
      excused++
      ok.push(s)
    } else {
      miss.push(s)
      missing.push(`${op} ${s}`)
    }
  }
  rows.push([op, hit.join(' '), ok.join(' '), miss.join(' ')])
}
for (const pair of exercised) {
  const [op] = pair.split(' ')
  if (op && !declared.has(op)) problems.push(`exercised pair for an operation not in the document: ${pair}`)
}

const widths = [0, 1, 2, 3].map((i) =>
  Math.max(
    ['operation', 'exercised', 'excused', 'MISSING'][i]?.length ?? 0,
    ...rows.map((r) => r[i]?.length ?? 0),
  ),
)
const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')
console.log('\nContract coverage: (operationId, status) pairs the suite exercised\n')
console.log(line(['operation', 'exercised', 'excused', 'MISSING']))
console.log(widths.map((w) => '-'.repeat(w)).join('-|-'))
for (const r of rows) console.log(line(r))
console.log(
  `\n${covered} of ${total} declared pairs exercised, ${excused} excused in test/contract-coverage-exceptions.json, ${missing.length} missing`,
)
for (const p of problems) console.error(`contract coverage: ${p}`)
if (missing.length > 0) {
  console.error(`contract coverage: never exercised and not excused:\n  ${missing.join('\n  ')}`)
}
process.exit(missing.length > 0 || problems.length > 0 ? 1 : 0)
