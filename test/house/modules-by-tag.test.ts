import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

// Where a handler lives follows from its operation's tag (ARCHITECTURE.md, "Modules and tags"): an
// operation tagged T is routed in src/modules/<module of T>/routes.ts, and the service function its
// handler calls is imported from that module's own folder. And only there: every operation of the
// document is routed once, by defineRoute or defineRawRoute in its module's routes.ts, and no file of
// src/ registers one any other way.

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const doc = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8')

/** The tag-to-module map of ARCHITECTURE.md: rows of `| Tag | \`module\` |` under its heading. */
function modulesByTag(): Map<string, string> {
  const start = doc.indexOf('## Modules and tags')
  const end = doc.indexOf('\n## ', start + 1)
  const out = new Map<string, string>()
  for (const [, tag = '', module = ''] of doc
    .slice(start, end === -1 ? undefined : end)
    .matchAll(/^\|\s*([A-Z][A-Za-z ]+?)\s*\|\s*`([a-z-]+)`\s*\|/gm))
    out.set(tag, module)
  return out
}

const spec = JSON.parse(readFileSync(join(ROOT, 'generated/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, { operationId?: string; tags?: string[] }>>
}

/** operationId → its tag, from the bundled document. */
function tagsByOperation(): Map<string, string> {
  const out = new Map<string, string>()
  for (const item of Object.values(spec.paths))
    for (const op of Object.values(item))
      if (op.operationId && op.tags?.[0]) out.set(op.operationId, op.tags[0])
  return out
}

/** The document's paths, in Fastify's form (`:param`) and its own (`{param}`). */
const documentedUrls = new Set(
  Object.keys(spec.paths).flatMap((path) => [path, path.replace(/\{([^}]+)\}/g, ':$1')]),
)

/** Each defineRoute (or defineRawRoute) of a routes file: its operationId and where the function its handler calls comes from. */
function routesOf(
  file: string,
  text = readFileSync(join(ROOT, file), 'utf8'),
): { operationId: string; from: string | null }[] {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const imports = new Map<string, string>()
  for (const s of src.statements) {
    const bindings = ts.isImportDeclaration(s) ? s.importClause?.namedBindings : undefined
    if (!bindings || !ts.isImportDeclaration(s) || !ts.isStringLiteral(s.moduleSpecifier)) continue
    const from = s.moduleSpecifier.text
    if (ts.isNamespaceImport(bindings)) imports.set(bindings.name.text, from)
    else for (const el of bindings.elements) imports.set(el.name.text, from)
  }
  // A function declared in the routes file itself is the module's own too (discovery's documents).
  for (const s of src.statements)
    if (
      ts.isFunctionDeclaration(s) &&
      s.name &&
      s.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
    )
      imports.set(s.name.text, './routes.js')
  const out: { operationId: string; from: string | null }[] = []
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isIdentifier(node.expression) &&
      (node.expression.text === 'defineRoute' || node.expression.text === 'defineRawRoute')
    ) {
      const [, id, handler] = node.arguments
      let called: string | null = null
      const find = (n: ts.Node): void => {
        // The called name: `service(...)`, or `namespace.service(...)` of an `import * as namespace`.
        const callee = !ts.isCallExpression(n)
          ? null
          : ts.isPropertyAccessExpression(n.expression) && ts.isIdentifier(n.expression.expression)
            ? n.expression.expression.text
            : ts.isIdentifier(n.expression)
              ? n.expression.text
              : null
        if (called === null && callee !== null && imports.has(callee)) {
          const from = imports.get(callee) ?? ''
          // Why skip these: they read the request (the principal, its audit metadata), they serve no operation.
          if (!/request-principal|audit\/write/.test(from)) called = from
        }
        ts.forEachChild(n, find)
      }
      if (handler) find(handler)
      if (id && ts.isStringLiteral(id)) out.push({ operationId: id.text, from: called })
    }
    ts.forEachChild(node, visit)
  }
  visit(src)
  return out
}

const TABLE = 'generated/routes.js'

/**
 * The files that may read the route table's values, each with its reason; written in ARCHITECTURE.md too.
 * Anywhere else, an import of it is the first step of an operation registered by hand.
 */
const TABLE_READERS: Record<string, string> = {
  'src/lib/route.ts': 'defineRoute and defineRawRoute themselves',
  'src/plugins/signup-cors.ts': "the OPTIONS preflights of the sign-up operations' URLs, not operations",
}

/** Fastify's route-registering methods: `app.route({...})`, `app.get(url, ...)` and the like. */
const REGISTERS = new Set(['route', 'get', 'head', 'post', 'put', 'patch', 'delete', 'options', 'all'])

interface Breach {
  file: string
  line: number
  /** define: defineRoute outside a module's routes.ts; by-hand: a route of an operation's; table: the route table read. */
  rule: 'define' | 'by-hand' | 'table'
  text: string
}

/** Does an import or export of the route table bring a value (not only types)? */
function bringsValue(s: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(s))
    return (
      !s.isTypeOnly &&
      (!s.exportClause ||
        !ts.isNamedExports(s.exportClause) ||
        s.exportClause.elements.some((e) => !e.isTypeOnly))
    )
  const clause = s.importClause
  if (!clause) return true
  if (clause.isTypeOnly) return false
  if (clause.name) return true
  const bindings = clause.namedBindings
  return !bindings || ts.isNamespaceImport(bindings) || bindings.elements.some((e) => !e.isTypeOnly)
}

/** Every way one file of src/ registers an operation other than defineRoute in its module's routes.ts. */
function registrationBreaches(file: string, text: string): Breach[] {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const out: Breach[] = []
  const add = (node: ts.Node, rule: Breach['rule']) =>
    out.push({
      file,
      line: src.getLineAndCharacterOfPosition(node.getStart(src)).line + 1,
      rule,
      text: node.getText(src).split('\n')[0]?.slice(0, 120) ?? '',
    })
  const routesFile = /^src\/modules\/[^/]+\/routes\.ts$/.test(file)
  const readsTable = file in TABLE_READERS
  /** A route's own marks in a registration's arguments: operationId or spec in its options, or a documented URL. */
  const carriesOperation = (node: ts.Node): boolean => {
    if (
      (ts.isPropertyAssignment(node) || ts.isShorthandPropertyAssignment(node)) &&
      (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name)) &&
      (node.name.text === 'operationId' || node.name.text === 'spec')
    )
      return true
    if (
      (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) &&
      documentedUrls.has(node.text)
    )
      return true
    return ts.forEachChild(node, carriesOperation) ?? false
  }
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && !readsTable) {
      const from = node.moduleSpecifier
      if (from && ts.isStringLiteral(from) && from.text.endsWith(TABLE) && bringsValue(node))
        add(node, 'table')
    }
    if (ts.isCallExpression(node)) {
      const callee = node.expression
      const [first] = node.arguments
      if (ts.isIdentifier(callee) && (callee.text === 'defineRoute' || callee.text === 'defineRawRoute')) {
        // Why a literal: the house can only tell which operation a call routes when it names it.
        const id = node.arguments[1]
        if (!routesFile || !id || !ts.isStringLiteral(id)) add(node, 'define')
      } else if (callee.kind === ts.SyntaxKind.ImportKeyword) {
        if (!readsTable && first && ts.isStringLiteral(first) && first.text.endsWith(TABLE))
          add(node, 'table')
      } else if (
        ts.isPropertyAccessExpression(callee) &&
        REGISTERS.has(callee.name.text) &&
        file !== 'src/lib/route.ts' &&
        node.arguments.some(carriesOperation)
      ) {
        add(node, 'by-hand')
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(src)
  return out
}

/** The document's operations against the routed ones: not routed, routed more than once, not documented. */
function coverage(documented: Iterable<string>, routed: readonly string[]) {
  const known = new Set(documented)
  const seen = new Set(routed)
  return {
    missing: [...known].filter((id) => !seen.has(id)).sort(),
    twice: [...seen].filter((id) => routed.indexOf(id) !== routed.lastIndexOf(id)).sort(),
    unknown: [...seen].filter((id) => !known.has(id)).sort(),
  }
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : [],
  )
}

t.test(
  'modules by tag: each operation is routed by the module of its tag, to a service of that module',
  async (t) => {
    const byTag = modulesByTag()
    const tags = tagsByOperation()
    t.same(
      [...new Set(tags.values())].filter((tag) => !byTag.has(tag)),
      [],
      'every tag of the document has a module',
    )
    const dirs = readdirSync(join(ROOT, 'src/modules'), { withFileTypes: true }).filter((e) =>
      e.isDirectory(),
    )
    const routed: string[] = []
    for (const dir of dirs) {
      let routes: { operationId: string; from: string | null }[]
      try {
        routes = routesOf(`src/modules/${dir.name}/routes.ts`)
      } catch {
        continue
      }
      for (const r of routes) {
        routed.push(r.operationId)
        const tag = tags.get(r.operationId)
        t.equal(
          byTag.get(tag ?? ''),
          dir.name,
          `${r.operationId} (${tag ?? 'no tag'}) is routed in modules/${dir.name}`,
        )
        t.ok(
          r.from?.startsWith('./'),
          `${r.operationId}: its service is in modules/${dir.name} (imported from ${r.from ?? 'nowhere'})`,
        )
      }
    }
    t.ok(routed.length > 60, 'the routes files were read')
    t.same(
      coverage(tags.keys(), routed),
      { missing: [], twice: [], unknown: [] },
      'every operation of the document is routed once, by defineRoute or defineRawRoute',
    )
  },
)

t.test('modules by tag: no file of src/ registers an operation but its module’s routes.ts', async (t) => {
  const files = sourceFiles('src')
  t.ok(files.length > 50, 'src/ was read')
  const found = files.flatMap((f) => registrationBreaches(f, readFileSync(join(ROOT, f), 'utf8')))
  t.same(
    found.map((b) => `${b.file}:${b.line} [${b.rule}] ${b.text}`),
    [],
    'no operation registered elsewhere (ARCHITECTURE.md, "Modules and tags")',
  )
  for (const file of Object.keys(TABLE_READERS))
    t.ok(doc.includes(file), `the route table's reader ${file} is written in ARCHITECTURE.md`)
})

t.test('modules by tag: the checks find what they look for', async (t) => {
  const rules = (file: string, text: string) => registrationBreaches(file, text).map((b) => b.rule)
  // What src/plugins/console.ts did with the mail links' pages, and src/modules/system/routes.ts with
  // getMetrics, before both moved onto defineRawRoute.
  t.same(
    rules(
      'src/plugins/console.ts',
      `import { routes } from '../../generated/routes.js'
       for (const id of LINK_PAGES) {
         const spec = routes[id]
         app.route({ method: spec.method, url: spec.url, config: { operationId: id, spec }, handler })
       }`,
    ),
    ['table', 'by-hand'],
    'the route table read and a route carrying an operationId, in a plugin',
  )
  t.same(
    rules(
      'src/modules/system/routes.ts',
      `import { routes } from '../../../generated/routes.js'
       const spec = routes.getMetrics
       app.route({ method: spec.method, url: spec.url, config: { operationId: spec.operationId, spec }, handler })`,
    ),
    ['table', 'by-hand'],
    'an operation registered by hand in its own module’s routes.ts',
  )
  t.same(
    rules('src/plugins/console.ts', `app.get('/console/reset-password', page)`),
    ['by-hand'],
    'a documented URL registered without the table',
  )
  t.same(
    rules(
      'src/modules/users/routes.ts',
      'app.route({ method: `GET`, url: `/api/v1/users/:userId`, handler })',
    ),
    ['by-hand'],
    'a documented URL in its Fastify form',
  )
  t.same(
    rules('src/plugins/console.ts', `defineRawRoute(app, 'getVerifyEmailPage', page)`),
    ['define'],
    'defineRawRoute in a plugin',
  )
  t.same(
    rules('src/modules/users/service.ts', `defineRoute(app, 'deleteUser', handler)`),
    ['define'],
    'defineRoute in a module file that is not its routes.ts',
  )
  t.same(
    rules('src/modules/users/routes.ts', `for (const id of IDS) defineRoute(app, id, handler)`),
    ['define'],
    'an operationId the check cannot read',
  )
  t.same(
    rules('src/lib/clock.ts', `const load = () => import('../../generated/routes.js')`),
    ['table'],
    'the route table imported at run time',
  )
  t.same(
    rules(
      'src/modules/users/routes.ts',
      `import type { OperationId } from '../../../generated/routes.js'
       import { type RouteTypes } from '../../lib/route.js'
       defineRoute(app, 'deleteUser', handler)
       defineRawRoute(app, 'getJwks', handler, { validateQuery: false })
       app.get('/console/*', page)
       cache.get('key')`,
    ),
    [],
    'types of the table, defineRoute in routes.ts, a route of no operation and a Map’s get are allowed',
  )
  t.same(
    rules('src/plugins/signup-cors.ts', `import { routes } from '../../generated/routes.js'`),
    [],
    'a named reader of the table',
  )
  t.same(
    coverage(['a', 'b', 'c'], ['a', 'a', 'c', 'd']),
    { missing: ['b'], twice: ['a'], unknown: ['d'] },
    'an operation not routed, one routed twice, one not in the document',
  )
  t.same(
    routesOf(
      'src/modules/users/routes.ts',
      `import { deleteRole } from '../roles/service.js'
       import { deleteUser } from './service.js'
       defineRoute(app, 'deleteUser', async (req) => deleteRole(ctx, req.params.userId))
       defineRoute(app, 'getUser', async (req) => deleteUser(ctx, req.params.userId))`,
    ),
    [
      { operationId: 'deleteUser', from: '../roles/service.js' },
      { operationId: 'getUser', from: './service.js' },
    ],
    'a handler’s service is found where it is imported from',
  )
})
