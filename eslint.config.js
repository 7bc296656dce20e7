import js from '@eslint/js'
import tseslint from 'typescript-eslint'

// The layers of src/ (ARCHITECTURE.md, "Layers"), highest first: a file may import its own layer and the
// ones below it, never one above. Each layer is recognised by a path segment of the import, which in
// src/ names only that layer.
const layer = {
  entry: { regex: '(^|/)(server|cli)\\.js$', message: 'nothing imports an entry point (server.ts, cli.ts)' },
  app: { regex: '(^|/)app(\\.js$|/)', message: 'only the entry points import app.ts and src/app/' },
  plugins: {
    regex: '(^|/)plugins/',
    message: 'plugins are registered by app.ts; lower layers do not import them',
  },
  modules: {
    regex: '(^|/)modules/',
    message: 'a lower layer reaches a module through the context, never by import',
  },
  context: {
    regex: '(^|/)context\\.js$',
    message: 'security, db and lib sit below the context: take what you need as an argument',
  },
  security: { regex: '(^|/)security/', message: 'db, lib, config and errors sit below security' },
}

/** A files block forbidding imports of the given layers. */
const below = (files, forbidden, extra = []) => ({
  files,
  rules: {
    '@typescript-eslint/no-restricted-imports': [
      'error',
      { patterns: [...forbidden.map((name) => layer[name]), ...extra] },
    ],
  },
})

export default tseslint.config(
  {
    ignores: [
      'generated/**',
      'dist/**',
      'clients/typescript/src/generated/**',
      'clients/typescript/dist/**',
      'console/dist/**',
      '.scratch/**',
      'node_modules/**',
      'coverage/**',
      '.tap/**',
      '.data/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // The one plain-JavaScript script (scripts/build-console.mjs: run by node at every start, no tsx) runs in Node.
  { files: ['**/*.mjs'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
  // Type-aware rules that catch server bugs: a promise nobody awaits (an unhandled rejection kills the
  // process), a promise where a boolean or a void callback is expected, `await` of a non-promise, and a
  // switch that forgets a member of a union (a new error code, a new status).
  {
    files: ['**/*.ts'],
    // knip.config.ts sits outside tsconfig.json's folders; the default project types it.
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['knip.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // tap's `test()` and `t.test()` queue a subtest and return its promise, which tap awaits itself.
          allowForKnownSafePromises: [
            { from: 'package', name: 'PromiseWithSubtest', package: '@tapjs/core' },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
    },
  },
  // Layers: entry (server.ts, cli.ts) → app.ts, app/ → plugins/ | modules/ → context.ts → security/ →
  // db/, config.ts, errors.ts → lib/. generated/ is importable by all.
  below(['src/app.ts', 'src/app/**/*.ts'], ['entry']),
  below(['src/plugins/**/*.ts'], ['entry', 'app', 'modules']),
  below(['src/modules/**/*.ts'], ['entry', 'app', 'plugins']),
  // The context declares what it holds as interfaces the modules implement: it imports no module, not even a type.
  below(['src/context.ts'], ['entry', 'app', 'plugins', 'modules']),
  below(['src/security/**/*.ts'], ['entry', 'app', 'plugins', 'modules', 'context']),
  below(
    ['src/db/**/*.ts', 'src/config.ts', 'src/errors.ts'],
    ['entry', 'app', 'plugins', 'modules', 'context', 'security'],
  ),
  // lib imports nothing of ours but lib (and generated/).
  below(
    ['src/lib/**/*.ts'],
    [],
    [
      {
        regex: '^\\.\\./(?!\\.\\./generated/)',
        message: 'lib imports nothing of ours but lib and generated/',
      },
    ],
  ),
)
