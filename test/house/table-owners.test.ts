import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

// The queries rule of ARCHITECTURE.md ("Tables and their owners"), held here by reading src/:
// 1. Query code (a Kysely statement or a raw `sql` template) is written only in a module's queries files
//    (`queries.ts`, `*-queries.ts`, `queries/*.ts`) and in src/db/ (migrations and the database's own
//    plumbing). Services, routes, plugins and src/security build none.
// 2. A statement that writes a table (insertInto, updateTable, deleteFrom, mergeInto; raw insert, update,
//    delete) is in a queries file of the table's owner.
// 3. A Kysely read starts (selectFrom) at a table of the file's own module. Joins and raw statements may
//    read other modules' tables: one statement instead of several round trips.
// The owners are read from ARCHITECTURE.md itself, so the map there is the one the code keeps.

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

const WRITES = new Set(['insertInto', 'updateTable', 'deleteFrom', 'mergeInto', 'replaceInto'])
const STARTS = new Set(['selectFrom', ...WRITES])
// Why: a selectFrom in a callback of these builder methods is a subquery of another statement, read like a join.
const SUBQUERY_HOSTS = new Set([
  'where',
  'orWhere',
  'having',
  'select',
  'set',
  'values',
  'on',
  'with',
  'innerJoin',
  'leftJoin',
])
const RAW_WRITE = /\b(?:insert\s+into|update|delete\s+from)\s+([a-z_][a-z0-9_.]*)/gi

/** Places where a rule is broken on purpose, each with the reason ARCHITECTURE.md gives. */
const EXCEPTIONS: Record<string, { tables: string[]; why: string }> = {
  'src/modules/sessions/queries.ts': {
    tables: ['tessera_audit.audit_log'],
    why: 'the refresh is one statement, its audit row included; a call to the audit module would add a round trip',
  },
  'src/modules/tenants/routing/queries.ts': {
    tables: ['client_key_usage', 'client_key_usage_hourly', 'client_key_usage_marks', 'permissions'],
    why: 'moving or deleting a tenant copies and purges every tenant table, by name (TENANT_TABLES)',
  },
}

interface Finding {
  file: string
  line: number
  rule: 'location' | 'write' | 'read'
  text: string
}

/** The table-to-module map of ARCHITECTURE.md: rows of `| \`table\` | module | ... |` under its heading. */
function ownersFromDoc(doc: string): Map<string, string> {
  const start = doc.indexOf('## Tables and their owners')
  const section = doc.slice(
    start,
    doc.indexOf('\n## ', start + 1) === -1 ? undefined : doc.indexOf('\n## ', start + 1),
  )
  const owners = new Map<string, string>()
  for (const [, table = '', module = ''] of section.matchAll(
    /^\|\s*`([a-z_.]+)`\s*\|\s*`?([a-z-]+)`?\s*\|/gm,
  ))
    owners.set(table, module)
  return owners
}

/** The module of a file under src/modules/, and whether it is one of that module's queries files. */
function placeOf(file: string): { module: string | null; queries: boolean; db: boolean } {
  const [, module, rest] = /^src\/modules\/([a-z-]+)\/(.+)$/.exec(file) ?? []
  if (!module || !rest) return { module: null, queries: false, db: file.startsWith('src/db/') }
  const name = rest.split('/').pop() ?? ''
  const queries =
    name === 'queries.ts' || name.endsWith('-queries.ts') || /(^|\/)queries\/[^/]+\.ts$/.test(rest)
  return { module, queries, db: false }
}

const tableOf = (literal: string) => (literal.split(/\s+as\s+/i)[0] ?? '').trim()

/** Whether a call sits in a callback handed to a builder method: a subquery of a larger statement. */
function inSubquery(node: ts.Node): boolean {
  for (let n = node.parent; n; n = n.parent) {
    if (!ts.isArrowFunction(n) && !ts.isFunctionExpression(n)) continue
    const host = n.parent
    if (ts.isCallExpression(host) && ts.isPropertyAccessExpression(host.expression))
      return SUBQUERY_HOSTS.has(host.expression.name.text)
    return false
  }
  return false
}

/** Every breach of the three rules in one file's text. */
function findBreaches(file: string, text: string, owners: Map<string, string>): Finding[] {
  const out: Finding[] = []
  const place = placeOf(file)
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const excused = (table: string) => EXCEPTIONS[file]?.tables.includes(table) ?? false
  const at = (node: ts.Node) => src.getLineAndCharacterOfPosition(node.getStart(src)).line + 1
  const add = (node: ts.Node, rule: Finding['rule'], what: string) =>
    out.push({ file, line: at(node), rule, text: what })
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text
      const arg = node.arguments[0]
      if (STARTS.has(method) && arg && ts.isStringLiteralLike(arg)) {
        const table = tableOf(arg.text)
        if (owners.has(table) || table.includes('.')) {
          if (!place.queries && !place.db)
            add(node, 'location', `${method}('${table}') outside a queries file`)
          else if (
            place.module !== null &&
            owners.get(table) !== place.module &&
            !excused(table) &&
            !(method === 'selectFrom' && inSubquery(node))
          )
            add(
              node,
              WRITES.has(method) ? 'write' : 'read',
              `${method}('${table}') in module ${place.module}; ${table} is ${owners.get(table) ?? 'no module'}'s`,
            )
        }
      }
    }
    if (ts.isTaggedTemplateExpression(node) && ts.isIdentifier(node.tag) && node.tag.text === 'sql') {
      const tpl = node.template
      const raw = ts.isNoSubstitutionTemplateLiteral(tpl)
        ? tpl.text
        : [tpl.head.text, ...tpl.templateSpans.map((s) => s.literal.text)].join(' ? ')
      if (!place.queries && !place.db)
        add(node, 'location', `sql\`${raw.trim().slice(0, 40)}…\` outside a queries file`)
      else if (place.module !== null) {
        for (const m of raw.matchAll(RAW_WRITE)) {
          const table = m[1] ?? ''
          if (owners.has(table) && owners.get(table) !== place.module && !excused(table))
            add(node, 'write', `raw ${m[0]} in module ${place.module}; ${table} is ${owners.get(table)}'s`)
        }
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(src)
  return out
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )
}

const doc = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8')
const owners = ownersFromDoc(doc)

t.test(
  'table owners: ARCHITECTURE.md gives every table of the Database interface one existing module',
  async (t) => {
    const database = readFileSync(join(ROOT, 'src/db/database.ts'), 'utf8')
    const body = database.slice(database.indexOf('export interface Database {'))
    const tables = [...body.slice(0, body.indexOf('\n}')).matchAll(/^\s+'?([a-z_.]+)'?:/gm)].map((m) => m[1])
    t.ok(tables.length > 10, 'the Database interface was read')
    t.same([...owners.keys()].sort(), [...tables].sort(), 'one row per table, no more')
    const modules = new Set(
      readdirSync(join(ROOT, 'src/modules'), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name),
    )
    for (const [table, module] of owners) t.ok(modules.has(module), `${table}: src/modules/${module} exists`)
    for (const file of Object.keys(EXCEPTIONS))
      t.ok(doc.includes(file), `the exception ${file} is written in ARCHITECTURE.md`)
  },
)

t.test('table owners: query code only in queries files, writes and reads only by the owner', async (t) => {
  const files = sourceFiles('src').map((f) => relative(ROOT, join(ROOT, f)).split('\\').join('/'))
  t.ok(files.length > 50, 'src/ was read')
  const found = files.flatMap((f) => findBreaches(f, readFileSync(join(ROOT, f), 'utf8'), owners))
  t.same(
    found.map((b) => `${b.file}:${b.line} [${b.rule}] ${b.text}`),
    [],
    'no breach (ARCHITECTURE.md, "Tables and their owners")',
  )
})

t.test('table owners: the check finds what it looks for', async (t) => {
  const own = new Map([
    ['users', 'users'],
    ['roles', 'roles'],
    ['sessions', 'sessions'],
  ])
  const rules = (file: string, text: string) => findBreaches(file, text, own).map((b) => b.rule)
  t.same(
    rules('src/modules/roles/queries.ts', `db.insertInto('users').values({})`),
    ['write'],
    'a write of another module’s table',
  )
  t.same(
    rules('src/modules/roles/queries.ts', `db.selectFrom('users as u').selectAll()`),
    ['read'],
    'a read that starts at another module’s table',
  )
  t.same(
    rules('src/modules/roles/queries.ts', 'sql`update users set x = 1`.execute(db)'),
    ['write'],
    'a raw write',
  )
  t.same(
    rules('src/modules/roles/service.ts', `trx.updateTable('roles').set({})`),
    ['location'],
    'a query in a service',
  )
  t.same(rules('src/security/grants.ts', 'sql`select 1`'), ['location'], 'raw SQL outside the modules')
  t.same(
    rules('src/modules/roles/queries.ts', `db.selectFrom('roles').innerJoin('users', 'a', 'b')`),
    [],
    'a join is allowed',
  )
  t.same(
    rules('src/modules/roles/queries.ts', 'sql`select 1 from users join sessions on true`'),
    [],
    'a raw read is allowed',
  )
  t.same(
    rules('src/modules/roles/queries.ts', `q.where((eb) => eb.exists(eb.selectFrom('users').select('id')))`),
    [],
    'a subquery reads like a join',
  )
  t.same(
    rules('src/modules/roles/roles-queries.ts', `db.deleteFrom('roles')`),
    [],
    'a *-queries.ts file is a queries file',
  )
  t.same(rules('src/db/migrations/0001.ts', `db.insertInto('users')`), [], 'src/db/ is exempt')
  t.same(
    [
      ...ownersFromDoc(
        '## Tables and their owners\n\n| `a_b` | `roles` | x |\n\n## Next\n| `c` | d |',
      ).entries(),
    ],
    [['a_b', 'roles']],
  )
})
