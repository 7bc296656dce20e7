// Node module hooks for the tests (registered by test-loader.mjs): a relative `./x.js` import from the project's
// own code resolves to `./x.ts` (or `.tsx`) when that exists, and .ts/.tsx files are transpiled by esbuild, with
// an inline source map for coverage. Transpiled files are kept in .tap/esm-cache/ by a hash of their path and text,
// so only the first process after an edit pays for it.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { fileURLToPath, URL } from 'node:url'
import { transformSync, version } from 'esbuild'

const CACHE = new URL('../.tap/esm-cache/', import.meta.url)
mkdirSync(CACHE, { recursive: true })

// The options the whole project is transpiled with (tsx for the service, the production bundle): syntax the
// running Node has stays as written, and class fields keep the semantics tsconfig.json's ES2022 target gives them.
const OPTIONS = {
  format: 'esm',
  target: `node${process.versions.node}`,
  sourcemap: 'inline',
  tsconfigRaw: { compilerOptions: { useDefineForClassFields: true, verbatimModuleSyntax: false } },
}

/** `./x.js` → `./x.ts` or `./x.tsx` beside it, for imports written the way Node ESM and tsc want them. */
export async function resolve(specifier, context, next) {
  const parent = context.parentURL
  const relative = specifier.startsWith('./') || specifier.startsWith('../')
  if (
    relative &&
    specifier.endsWith('.js') &&
    parent?.startsWith('file:') &&
    !parent.includes('/node_modules/')
  ) {
    for (const ext of ['.ts', '.tsx']) {
      const url = new URL(specifier.slice(0, -3) + ext, parent)
      if (existsSync(url)) return { url: url.href, format: 'module', shortCircuit: true }
    }
  }
  return next(specifier, context)
}

/** A .ts or .tsx file as an ES module, from the cache when its text has not changed. */
export async function load(url, context, next) {
  if (!url.startsWith('file:') || !/\.tsx?$/.test(url)) return next(url, context)
  const file = fileURLToPath(url)
  const text = readFileSync(file, 'utf8')
  const key = createHash('sha1')
    .update(version)
    .update(OPTIONS.target)
    .update(file)
    .update(text)
    .digest('hex')
  const cached = new URL(`${key}.js`, CACHE)
  if (existsSync(cached))
    return { format: 'module', source: readFileSync(cached, 'utf8'), shortCircuit: true }
  const { code } = transformSync(text, {
    ...OPTIONS,
    loader: url.endsWith('.tsx') ? 'tsx' : 'ts',
    sourcefile: file,
  })
  // Written under a name of its own, then renamed: a concurrent process reads a whole file or none.
  const partial = new URL(`${key}.${process.pid}.partial`, CACHE)
  writeFileSync(partial, code)
  renameSync(partial, cached)
  return { format: 'module', source: code, shortCircuit: true }
}
