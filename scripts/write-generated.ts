import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { relative, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '..')

/**
 * Writes generated files into `outDir`, or with `--check` on the command line compares them instead and
 * exits 1 naming each stale file and the make target that regenerates it (the CI drift gate).
 */
export async function writeOrCheck(
  outDir: string,
  files: Record<string, string>,
  makeTarget: string,
): Promise<void> {
  const check = process.argv.includes('--check')
  const shown = relative(root, outDir) + '/'
  let stale = false
  await mkdir(outDir, { recursive: true })
  for (const [name, content] of Object.entries(files)) {
    const target = resolve(outDir, name)
    if (!check) {
      await writeFile(target, content)
      continue
    }
    if ((await readFile(target, 'utf8').catch(() => '')) !== content) {
      stale = true
      console.error(`${shown}${name} is stale: run \`make ${makeTarget}\` and commit the result`)
    }
  }
  if (stale) process.exit(1)
  console.log(check ? `${shown} is up to date` : `wrote ${Object.keys(files).join(', ')} to ${shown}`)
}
