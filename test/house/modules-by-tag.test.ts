import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

// Where a handler lives follows from its operation's tag (ARCHITECTURE.md, "Modules and tags"): an
// operation tagged T is routed in src/modules/<module of T>/routes.ts, and the service function its
// handler calls is imported from that module's own folder.

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

/** operationId → its tag, from the bundled document. */
function tagsByOperation(): Map<string, string> {
  const spec = JSON.parse(readFileSync(join(ROOT, 'generated/openapi.json'), 'utf8')) as {
    paths: Record<string, Record<string, { operationId?: string; tags?: string[] }>>
  }
  const out = new Map<string, string>()
  for (const item of Object.values(spec.paths))
    for (const op of Object.values(item))
      if (op.operationId && op.tags?.[0]) out.set(op.operationId, op.tags[0])
  return out
}

/** Each defineRoute (or defineRawRoute) of a routes file: its operationId and where the function its handler calls comes from. */
function routesOf(file: string): { operationId: string; from: string | null }[] {
  const src = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true)
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
    let routed = 0
    for (const dir of dirs) {
      let routes: { operationId: string; from: string | null }[]
      try {
        routes = routesOf(`src/modules/${dir.name}/routes.ts`)
      } catch {
        continue
      }
      for (const r of routes) {
        routed++
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
    t.ok(routed > 60, 'the routes files were read')
  },
)
