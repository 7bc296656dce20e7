// How every test process runs TypeScript: .taprc passes `--import=./scripts/test-loader.mjs` to Node and drops
// tap's own TypeScript plugin (ts-node). The hooks are in test-loader-hooks.mjs, which Node runs off the main thread.
// Why not ts-node: it cost a test process about 4 s of CPU to import test/helpers/app.ts, against about 1.2 s here
// (2026-11-28), and the suite starts some 220 test processes per `make test`. Why not tsx's own loader: it strips
// the output's whitespace, and c8 then maps coverage onto a handful of lines per file.
import { register } from 'node:module'
import { setFlagsFromString } from 'node:v8'

register('./test-loader-hooks.mjs', import.meta.url)

// Why no tier-up of WebAssembly to the optimizing compiler in test processes: PGlite is a large Wasm module,
// and Node 24's optimizing Wasm compiler (Turboshaft) has a known fatal "out of memory: Zone" abort
// (nodejs/node#63421) that kills the whole process with no JavaScript error. One shared-queue runner of the
// Node 24 pass died by SIGILL as a file's PGlite closed or the next opened (CI, 2026-12-03; what V8 printed was
// not kept, so the cause is not proven: this takes away the one compiler known to abort so). PGlite's queries
// ran no slower on Liftoff alone (3,000 inserts and selects: 823-885 ms against 885-1,107 ms with tier-up, on
// Node 20 and 24), and the background compiles no longer take a core. Must be set before any Wasm compiles.
setFlagsFromString('--no-wasm-tier-up')
