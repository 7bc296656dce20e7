/**
 * Every operation of the document has a test named after it: some `t.test('<operationId>: ...')` (or a
 * title led by a list, `'getRole, getRolePermissions: ...'`) under test/. Prints the operations without
 * one and exits 1, so a grep for an operationId always finds its tests.
 *
 * Usage: tsx scripts/test-names.ts
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

interface Document {
  paths: Record<string, Record<string, { operationId?: string }>>
}

const root = new URL('..', import.meta.url).pathname
const doc = JSON.parse(readFileSync(join(root, 'generated/openapi.json'), 'utf8')) as Document
const operations = Object.values(doc.paths).flatMap((methods) =>
  Object.values(methods).flatMap((op) => (op.operationId ? [op.operationId] : [])),
)

function* testFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* testFiles(path)
    else if (entry.name.endsWith('.test.ts')) yield path
  }
}

// The operationIds that lead a title: `'login: ...'`, `'getRole, getRolePermissions: ...'`.
const named = new Map<string, number>()
const title = /\.test\(\s*(['"`])([A-Za-z]+(?:, [A-Za-z]+)*):/g
for (const file of testFiles(join(root, 'test'))) {
  for (const m of readFileSync(file, 'utf8').matchAll(title)) {
    for (const id of m[2]!.split(', ')) named.set(id, (named.get(id) ?? 0) + 1)
  }
}

const missing = operations.filter((op) => !named.has(op))
for (const op of operations) console.log(`${op.padEnd(24)} ${named.get(op) ?? 0}`)
if (missing.length > 0) {
  console.error(`\nno test is named after: ${missing.join(', ')}`)
  process.exit(1)
}
console.log(`\nevery one of ${operations.length} operations has a test named after it`)
