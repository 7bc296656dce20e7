// How every test process runs TypeScript: .taprc passes `--import=./scripts/test-loader.mjs` to Node and drops
// tap's own TypeScript plugin (ts-node). The hooks are in test-loader-hooks.mjs, which Node runs off the main thread.
// Why not ts-node: it cost a test process about 4 s of CPU to import test/helpers/app.ts, against about 1.2 s here
// (2026-11-28), and the suite starts some 220 test processes per `make test`. Why not tsx's own loader: it strips
// the output's whitespace, and c8 then maps coverage onto a handful of lines per file.
import { register } from 'node:module'

register('./test-loader-hooks.mjs', import.meta.url)
