import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'

// Builds the console (console/ → console/dist/) only when its output is missing or older than anything
// it is built from, so `npm start` and `make run` serve a current console without paying for a build
// on every start. `--force` builds anyway. Why plain JavaScript run by node, not TypeScript by tsx: the
// check runs at every `npm start`, and tsx's loader alone would cost it most of a second.

const root = resolve(import.meta.dirname, '..')
const output = join(root, 'console/dist/index.html')
/** What the bundle is made of: its own sources, the SDK's, and the document its schemas come from. */
const inputs = [
  'console/src',
  'console/public',
  'console/index.html',
  'console/vite.config.ts',
  'console/package.json',
  'clients/typescript/src',
  'generated/openapi.json',
  'package-lock.json',
]

/**
 * The newest modification time under a file or folder (0 when it does not exist).
 * @param {string} path
 * @returns {number}
 */
function newest(path) {
  if (!existsSync(path)) return 0
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return readdirSync(path).reduce((max, name) => Math.max(max, newest(join(path, name))), stat.mtimeMs)
}

/** @returns {boolean} */
function consoleIsStale() {
  if (!existsSync(output)) return true
  const built = statSync(output).mtimeMs
  return inputs.some((input) => newest(join(root, input)) > built)
}

async function main() {
  if (!process.argv.includes('--force') && !consoleIsStale()) return
  const started = Date.now()
  // Imported only when a build is due: loading Vite costs more than the check above.
  const { build } = await import('vite')
  await build({ configFile: join(root, 'console/vite.config.ts'), logLevel: 'warn' })
  console.log(`console built into console/dist in ${Date.now() - started} ms`)
}

await main()
