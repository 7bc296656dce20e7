import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { defineConfig, type Plugin } from 'vite'

const here = import.meta.dirname
const DOCUMENT = resolve(here, '../generated/openapi.json')

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** A component schema with every `$ref` replaced by what it names (the document has no recursive ones). */
export function resolveSchema(doc: { components: { schemas: Record<string, Json> } }, name: string): Json {
  const walk = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(walk)
    if (node === null || typeof node !== 'object') return node
    const ref = node.$ref
    if (typeof ref === 'string') return walk(doc.components.schemas[ref.split('/').pop() ?? ''] ?? null)
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v)]))
  }
  return walk(doc.components.schemas[name] ?? null)
}

/**
 * `virtual:tessera-schemas`: the document's own schemas the console's forms are checked against
 * (contract section 19: "the tenant's auth_config as a form checked against the document's schema"),
 * resolved at build time. Why not import openapi.json: the whole document would be in the bundle.
 */
function documentSchemas(): Plugin {
  const id = 'virtual:tessera-schemas'
  return {
    name: 'tessera-schemas',
    resolveId: (source) => (source === id ? `\0${id}` : undefined),
    load(loaded) {
      if (loaded !== `\0${id}`) return undefined
      this.addWatchFile(DOCUMENT)
      const doc = JSON.parse(readFileSync(DOCUMENT, 'utf8'))
      const actions = resolveSchema(doc, 'AuditAction') as { enum: string[] }
      return (
        `export const authConfigPatch = ${JSON.stringify(resolveSchema(doc, 'AuthConfigPatch'))}\n` +
        `export const auditActions = ${JSON.stringify(actions.enum)}\n`
      )
    },
  }
}

/** What is worth compressing: text. Images other than SVG are compressed already. */
const COMPRESSIBLE = /\.(?:js|css|html|svg|json|txt)$/

/**
 * Writes `name.br` and `name.gz` beside every text file of the build, at the highest levels (once per
 * build, not per request). The service serves them with @fastify/static's `preCompressed` to a browser
 * that accepts them (contract section 19: the first load transfers at most 250 KB gzip).
 */
export function precompress(outDir: string): Plugin {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
    )
  return {
    name: 'tessera-precompress',
    apply: 'build',
    closeBundle() {
      for (const file of walk(outDir).filter((f) => COMPRESSIBLE.test(f))) {
        const body = readFileSync(file)
        writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }))
        writeFileSync(
          `${file}.br`,
          brotliCompressSync(body, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
              [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
            },
          }),
        )
      }
    },
  }
}

const OUT_DIR = resolve(here, 'dist')

export default defineConfig({
  root: here,
  base: '/console/',
  // Why an alias to the SDK's source, not its built dist/: the console is built from this checkout's
  // code, with no `make sdk` step first, and the SDK's types are the document's.
  resolve: { alias: { '@tessera/client': resolve(here, '../clients/typescript/src/index.ts') } },
  plugins: [documentSchemas(), precompress(OUT_DIR)],
  build: {
    outDir: OUT_DIR,
    emptyOutDir: true,
    // Why no inlined assets: a data: script or style would need a looser CSP.
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    rolldownOptions: {
      // Why: TanStack Query marks modules "use client" for React Server Components; a plain SPA has none.
      onLog(level, log, handler) {
        if (log.code === 'MODULE_LEVEL_DIRECTIVE') return
        handler(level, log)
      },
    },
  },
  logLevel: 'warn',
})
