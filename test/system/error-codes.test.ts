import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import t from 'tap'
import ts from 'typescript'
import document from '../../generated/openapi.json' with { type: 'json' }
import { errorStatus, type StatusTable } from '../../src/errors.js'

// The table of error codes (src/errors.ts) against the document's `ErrorCode` (openapi/components/
// errors.yaml): src/errors.ts claims that a code without a row, or a row without a code, does not compile.
// These tests hold it to that, and catch what the compiler cannot see (the statuses the document's prose
// gives each code).

const root = resolve(import.meta.dirname, '../..')
const errorsFile = resolve(root, 'src/errors.ts')
const schema = document.components.schemas.ErrorCode

// The compile-time checks, run by `make typecheck`: were StatusTable derived from the table again, these
// directives would be unused and fail the type check.
const { SERVICE_UNAVAILABLE: _dropped, ...missingRow } = errorStatus
// @ts-expect-error a table without a row for one of the document's codes is not a StatusTable
void (missingRow satisfies StatusTable)
// @ts-expect-error nor is a table with a row for a code the document does not declare
void ({ ...errorStatus, NOT_A_CODE: 500 } satisfies StatusTable)

/** The type errors of src/errors.ts with its source replaced by `edit(source)`. */
function compileErrors(edit: (source: string) => string): string[] {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
  }
  const host = ts.createCompilerHost(options)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (name, language, ...rest) =>
    resolve(name) === errorsFile
      ? ts.createSourceFile(name, edit(readFileSync(errorsFile, 'utf8')), language)
      : getSourceFile(name, language, ...rest)
  const program = ts.createProgram([errorsFile], options, host)
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)
}

t.test('ErrorCode: the document and the table have the same codes', async (t) => {
  t.same(Object.keys(errorStatus).sort(), [...schema.enum].sort())
})

t.test("ErrorCode: each code has the status the document's description gives it", async (t) => {
  // "Each code always comes with the same HTTP status: A and B 400; C, D and E 401; ...; Z 503."
  const list = schema.description.split('status:')[1] ?? ''
  const documented: Record<string, number> = {}
  for (const group of list.split(';')) {
    const status = Number(/\b\d{3}\b/.exec(group)?.[0])
    for (const code of group.match(/\b[A-Z][A-Z_]+[A-Z]\b/g) ?? []) documented[code] = status
  }
  t.same(documented, { ...errorStatus })
})

t.test('ErrorCode: src/errors.ts compiles, and does not without a row or with a row too many', async (t) => {
  t.same(
    compileErrors((s) => s),
    [],
    'as it is',
  )
  const rowOf = /^ {2}SERVICE_UNAVAILABLE: 503,\n/m
  t.match(readFileSync(errorsFile, 'utf8'), rowOf, 'the row the edits below remove and copy')
  const withoutRow = compileErrors((s) => s.replace(rowOf, ''))
  t.ok(
    withoutRow.some((e) => e.includes("Property 'SERVICE_UNAVAILABLE' is missing")),
    'a missing row',
    { found: withoutRow },
  )
  const extraRow = compileErrors((s) => s.replace(rowOf, '$&  NOT_A_CODE: 500,\n'))
  t.ok(
    extraRow.some((e) => e.includes("'NOT_A_CODE' does not exist")),
    'a row the document lacks',
    { found: extraRow },
  )
})
