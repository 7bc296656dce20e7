import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

// Where cookies may be set (ARCHITECTURE.md, "Where the sign-in protocols go"): only in the modules of the
// browser-facing protocols, src/modules/oidc/ and src/modules/federation/. Everything else is a bearer API
// and the console keeps its session in the page, so no other file of src/ sets one.

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const ALLOWED = /^src\/modules\/(oidc|federation)\//
// Why header calls only: the logger names `set-cookie` to redact it, which sets nothing.
const SETS_COOKIE = /\.(header|setHeader|appendHeader)\(\s*['"]set-cookie['"]|\.setCookie\(|cookies\.set\(/i

/** Every .ts file below `dir`. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : path.endsWith('.ts') ? [path] : []
  })
}

/** The files of `sources` outside the allowed modules that set a cookie. */
function cookieSetters(sources: [string, string][]): string[] {
  return sources.filter(([file, text]) => !ALLOWED.test(file) && SETS_COOKIE.test(text)).map(([f]) => f)
}

t.test('cookies: no file of src/ sets one outside the protocol modules', async (t) => {
  const sources = filesUnder(join(ROOT, 'src')).map((path): [string, string] => [
    relative(ROOT, path),
    readFileSync(path, 'utf8'),
  ])
  t.same(cookieSetters(sources), [])
})

t.test('cookies: the check finds what it looks for', async (t) => {
  t.same(
    cookieSetters([
      ['src/plugins/console.ts', `reply.header('Set-Cookie', 'a=b')`],
      ['src/modules/users/routes.ts', `reply.setCookie('a', 'b')`],
      ['src/modules/oidc/interaction.ts', `reply.setCookie('_interaction', uid)`],
      ['src/modules/email/routes.ts', `reply.header('cache-control', 'no-store')`],
      ['src/app/logger.ts', `redact: ['res.headers["set-cookie"]']`],
    ]),
    ['src/plugins/console.ts', 'src/modules/users/routes.ts'],
  )
})
