// ts-node's transpiler for every test run (both passes of make tap, make test-one): tsconfig.esbuild.json names it,
// and the Makefile points tap's TypeScript plugin (ts-node) at that file with TAP_TSCONFIG. esbuild instead of
// TypeScript's own transpiler, for every .ts file a test imports.
// Why: TypeScript's transpiler cost each test process some 6 s of CPU on src/ and generated/ before its first
// test (measured: importing test/helpers/app.ts, 12 s of CPU with it, 5 s with this, on a loaded machine).
// esbuild already runs src/ elsewhere (tsx for the service and the CLI, the production bundle).
// The coverage pass uses it too: c8 maps esbuild's output (with its source map) to slightly other lines and
// functions than TypeScript's, so the Makefile's floors were measured with this transpiler.
// ts-node calls this synchronously, per file, and appends the inline source map from `sourceMapText` itself.
/* global require, exports, process -- CommonJS under Node: ts-node require()s a transpiler by path */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS module: ts-node require()s it
const { transformSync } = require('esbuild')

/** ts-node's transpiler factory: `nodeModuleEmitKind` is 'nodecjs' for a CommonJS file, else ESM. */
exports.create = ({ nodeModuleEmitKind }) => ({
  transpile(input, { fileName }) {
    const { code, map } = transformSync(input, {
      loader: fileName.endsWith('.tsx') ? 'tsx' : 'ts',
      format: nodeModuleEmitKind === 'nodecjs' ? 'cjs' : 'esm',
      // The running Node, as tsx does: syntax it has stays as written (import attributes included), and class
      // fields keep the semantics TypeScript gives them at tsconfig.json's ES2022 target (define).
      target: `node${process.versions.node}`,
      tsconfigRaw: { compilerOptions: { useDefineForClassFields: true, verbatimModuleSyntax: false } },
      sourcemap: 'external',
      sourcefile: fileName,
    })
    return { outputText: code, sourceMapText: map }
  },
})
