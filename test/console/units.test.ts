import t from 'tap'
import { Script } from 'node:vm'
import document from '../../generated/openapi.json' with { type: 'json' }
import { seriesOf, total, windowOf } from '../../console/src/lib/chart-data.js'
import { csvField, toCsv } from '../../console/src/lib/csv.js'
import { coversWindow, parseList, requestsPerHour } from '../../console/src/lib/key-usage.js'
import { afterSignIn, signInFor } from '../../console/src/lib/next.js'
import { covers } from '../../console/src/lib/permissions.js'
import { givableRoles, keyChanges, signupSnippet } from '../../console/src/lib/publishable-keys.js'
import { choices, permissionDiff } from '../../console/src/lib/role-diff.js'
import { changes, validate, type JsonSchema } from '../../console/src/lib/schema.js'
import { browserProblem } from '../../console/src/lib/webauthn-errors.js'
import { tenantActions } from '../../console/src/lib/tenant-actions.js'
import { columnKey, formatSort, nextSort, parseSort, sortRows } from '../../console/src/ui/sort.js'
import { precompress, resolveSchema } from '../../console/vite.config.js'
import { TesseraError } from '../../clients/typescript/src/index.js'

// The console's logic without a browser: chart data shaping, the auth_config form's validation against
// the document's own schema, CSV and what the menu shows.

const HOUR = 3_600_000

t.test('chart data: every bucket of the window, zeros where the service counted none', async (t) => {
  const from = '2026-11-27T00:00:00.000Z'
  const stats = {
    bucket: 'hour' as const,
    from,
    to: '2026-11-27T04:00:00.000Z',
    series: [
      {
        action: 'LOGIN' as const,
        buckets: [
          { start: '2026-11-27T01:00:00.000Z', success: 3, failure: 1 },
          { start: '2026-11-27T03:00:00.000Z', success: 0, failure: 7 },
        ],
      },
      { action: 'ACCOUNT_LOCKED' as const, buckets: [{ start: from, success: 2, failure: 0 }] },
    ],
  }
  const login = seriesOf(stats, 'LOGIN')
  t.same(
    login.x.map((s) => new Date(s * 1000).toISOString()),
    ['00', '01', '02', '03'].map((h) => `2026-11-27T${h}:00:00.000Z`),
    'one point per hour, from `from` up to (not including) `to`',
  )
  t.same(login.success, [0, 3, 0, 0], 'successes in place')
  t.same(login.failure, [0, 1, 0, 7], 'failures in place')
  t.same(seriesOf(stats, 'LOGOUT').success, [0, 0, 0, 0], 'an action with no rows: all zeros')
  t.equal(total(stats, 'ACCOUNT_LOCKED', 'success'), 2, 'a total over the window')
  t.equal(total(stats, 'REGISTER', 'failure'), 0, 'none')
  const daily = seriesOf({ ...stats, bucket: 'day', to: '2026-11-30T00:00:00.000Z', series: [] }, 'LOGIN')
  t.equal(daily.x.length, 3, 'days step by a day')
  const now = Date.parse('2026-11-27T12:00:00.000Z')
  t.same(windowOf(24, now), { from: new Date(now - 24 * HOUR).toISOString(), to: '2026-11-27T12:00:00.000Z' })
})

t.test('key usage: requests per hour over 24 h from a key’s log, answered and refused apart', async (t) => {
  const now = Date.parse('2026-11-27T12:34:00.000Z')
  const row = (createdAt: string, statusCode: number) => ({
    id: createdAt + statusCode,
    keyId: 'k',
    method: 'GET' as const,
    route: '/api/v1/users',
    statusCode,
    ip: '203.0.113.5',
    origin: null,
    userAgent: null,
    requestId: null,
    createdAt,
  })
  const chart = requestsPerHour(
    [
      row('2026-11-27T12:30:00.000Z', 200),
      row('2026-11-27T12:00:00.000Z', 403),
      row('2026-11-27T11:59:59.999Z', 201),
      row('2026-11-27T11:00:00.000Z', 304),
      row('2026-11-26T13:00:00.000Z', 500),
      row('2026-11-26T12:59:59.000Z', 200), // before the window: not counted
      row('2026-11-27T13:00:00.000Z', 200), // after now's hour (a skewed clock): not counted
    ],
    now,
  )
  t.equal(chart.x.length, 24, '24 hourly buckets')
  t.equal(new Date((chart.x[0] ?? 0) * 1000).toISOString(), '2026-11-26T13:00:00.000Z', 'the first hour')
  t.equal(new Date((chart.x[23] ?? 0) * 1000).toISOString(), '2026-11-27T12:00:00.000Z', 'the hour now is in')
  t.same([chart.success[23], chart.failure[23]], [1, 1], 'this hour: a 200 answered, a 403 refused')
  t.same([chart.success[22], chart.failure[22]], [2, 0], 'the hour before: 201 and 304 answered')
  t.same([chart.success[0], chart.failure[0]], [0, 1], 'the first hour: a 500 failed')
  t.equal(
    chart.success.reduce((a, b) => a + b, 0) + chart.failure.reduce((a, b) => a + b, 0),
    5,
    'rows outside the window are ignored',
  )
  t.same(requestsPerHour([], now, 3).success, [0, 0, 0], 'no request: zeros, every bucket present')

  const since = now - 86_400_000
  t.ok(coversWindow([row('2026-11-27T12:00:00.000Z', 200)], 1, since), 'every row read')
  t.notOk(coversWindow([row('2026-11-27T12:00:00.000Z', 200)], 900, since), 'more rows, still in the window')
  t.ok(
    coversWindow([row('2026-11-25T12:00:00.000Z', 200)], 900, since),
    'the oldest read is before the window',
  )
  t.ok(coversWindow([], 0, since), 'an empty log')
})

t.test('allowlists typed in a box: one a line, commas too, trimmed, no repeats', async (t) => {
  t.same(parseList(' 203.0.113.0/24\n\n2001:db8::/32 , 203.0.113.0/24\r\n'), [
    '203.0.113.0/24',
    '2001:db8::/32',
  ])
  t.same(parseList('https://a.test,https://b.test'), ['https://a.test', 'https://b.test'])
  t.same(parseList('  \n '), [], 'empty: any')
})

t.test('form validation: the document’s AuthConfigPatch, resolved as the build resolves it', async (t) => {
  const schema = resolveSchema(document as never, 'AuthConfigPatch') as JsonSchema
  t.same(validate(schema, { passwordPolicy: { minLength: 12, requireDigit: true } }), [], 'a valid patch')
  t.same(validate(schema, { passwordPolicy: { minLength: 5 } }), [
    { path: '/passwordPolicy/minLength', message: 'must be at least 8' },
  ])
  t.same(validate(schema, { accessTokenExpiresIn: 30.5 }), [
    { path: '/accessTokenExpiresIn', message: 'must be a whole number' },
  ])
  t.same(validate(schema, { nope: 1 }), [{ path: '/nope', message: 'is not a known setting' }])
  t.same(validate(schema, { signingAlgorithm: 'RS256' })[0]?.path, '/signingAlgorithm', 'an enum')
  t.same(validate(schema, { loginIdentifiers: ['email', 'email'] }), [
    { path: '/loginIdentifiers', message: 'must not repeat an item' },
  ])
  t.ok(
    validate(schema, { email: { resetUrl: 'ftp://x' } }).length > 0,
    'a pattern or anyOf refuses a bad URL',
  )
})

t.test('form validation: the keywords one by one', async (t) => {
  t.same(
    validate({ type: 'string', minLength: 2, maxLength: 3 }, 'a')[0]?.message,
    'must have at least 2 characters',
  )
  t.same(validate({ type: 'string', maxLength: 3 }, 'abcd')[0]?.message, 'must have at most 3 characters')
  t.same(validate({ type: 'string', pattern: '^a' }, 'b')[0]?.message, 'is not in the expected form')
  t.same(validate({ type: 'integer', maximum: 3 }, 4)[0]?.message, 'must be at most 3')
  t.same(validate({ type: ['string', 'null'] }, null), [], 'a union type')
  t.same(validate({ const: true }, false)[0]?.message, 'must be true')
  t.same(validate({ type: 'array', minItems: 1 }, [])[0]?.message, 'must have at least 1 items')
  t.same(validate({ type: 'array', maxItems: 1 }, [1, 2])[0]?.message, 'must have at most 1 items')
  t.same(validate({ type: 'object', required: ['a'] }, {}), [{ path: '/a', message: 'is required' }])
  t.same(validate({ type: 'object', minProperties: 1 }, {})[0]?.message, 'must not be empty')
  t.same(validate({ type: 'object', additionalProperties: { type: 'number' } }, { a: 'x' })[0]?.path, '/a')
  t.same(validate({ anyOf: [{ type: 'string' }, { type: 'number' }] }, true)[0]?.message, 'must be string')
  t.same(validate({ type: 'array', items: { type: 'string' } }, [1])[0]?.path, '/0')
})

t.test('form changes: only what differs, nested', async (t) => {
  const current = { a: 1, p: { x: 1, y: 2 }, l: ['email'] }
  t.same(changes(current, { a: 1, p: { x: 1, y: 3 }, l: ['email'] }), { p: { y: 3 } })
  t.same(changes(current, { ...current, l: ['email', 'username'] }), { l: ['email', 'username'] })
  t.same(changes(current, current), {})
  // An object checked whole (one that may be null, as passkeys) goes whole; a list emptied goes as [].
  const schema: JsonSchema = {
    type: 'object',
    properties: {
      w: { anyOf: [{ type: 'object', required: ['rpId', 'origins'] }, { type: 'null' }] },
      p: { type: 'object' },
      l: { type: 'array', items: { type: 'string' } },
    },
  }
  const stored = { w: { rpId: 'localhost', origins: ['http://localhost:1'] }, p: { x: 1, y: 2 }, l: ['a'] }
  t.same(
    changes(
      stored,
      { ...stored, w: { rpId: 'localhost', origins: ['http://localhost:1', 'http://localhost:2'] } },
      schema,
    ),
    { w: { rpId: 'localhost', origins: ['http://localhost:1', 'http://localhost:2'] } },
  )
  t.same(changes(stored, { ...stored, p: { x: 1, y: 3 } }, schema), { p: { y: 3 } }, 'others still by key')
  t.same(changes(stored, { ...stored, l: [] }, schema), { l: [] })
  t.same(changes(stored, { ...stored, w: null }, schema), { w: null })
})

t.test('CSV: RFC 4180 quoting, and no formula from a user agent', async (t) => {
  t.equal(csvField('plain'), 'plain')
  t.equal(csvField('a,b'), '"a,b"')
  t.equal(csvField('say "hi"'), '"say ""hi"""')
  t.equal(csvField('=HYPERLINK("x")'), `"'=HYPERLINK(""x"")"`)
  t.equal(csvField(null), '')
  t.equal(csvField({ k: 1 }), '"{""k"":1}"')
  t.equal(toCsv([{ a: 1, b: 'x\ny' }], ['a', 'b']), 'a,b\r\n1,"x\ny"\r\n')
})

t.test('permissions: the name, its resource’s wildcard, or admin:*', async (t) => {
  t.ok(covers(['users:read'], 'users:read'))
  t.ok(covers(['users:*'], 'users:update'))
  t.ok(covers(['admin:*'], 'tenants:create'))
  t.notOk(covers(['users:read'], 'users:update'))
  t.notOk(covers(['roles:*'], 'users:read'))
})

t.test('a role’s permissions edit: what to add and what to remove, nothing else', async (t) => {
  t.same(permissionDiff(['users:read', 'users:update'], ['roles:read', 'users:read']), {
    add: ['roles:read'],
    remove: ['users:update'],
  })
  t.same(permissionDiff(['a:b'], ['a:b']), { add: [], remove: [] }, 'no change: no call')
  t.same(permissionDiff([], ['b:x', 'a:x', 'a:x']), { add: ['a:x', 'b:x'], remove: [] }, 'once each, sorted')
  t.same(
    choices(['users:read', 'roles:read'], ['custom:thing', 'users:read']),
    ['custom:thing', 'roles:read', 'users:read'],
    'what the role holds is offered even when the caller cannot list it',
  )
})

t.test('a publishable key’s edit: only the fields that changed, lists as sets', async (t) => {
  const key = {
    name: 'Sign-up page',
    allowedOrigins: ['https://a.test', 'https://b.test'],
    defaultRoles: ['user', 'reader'],
    signupsPerHour: 100,
  }
  t.same(keyChanges(key, { ...key }), {}, 'nothing changed: nothing to send')
  t.same(
    keyChanges(key, {
      ...key,
      allowedOrigins: ['https://b.test', 'https://a.test'],
      defaultRoles: ['reader', 'user'],
    }),
    {},
    'the same lists in another order',
  )
  t.same(
    keyChanges(key, { ...key, signupsPerHour: 25 }),
    { signupsPerHour: 25 },
    'the default roles left alone',
  )
  t.same(
    keyChanges(key, {
      name: 'Landing',
      allowedOrigins: ['https://a.test'],
      defaultRoles: [],
      signupsPerHour: 100,
    }),
    { name: 'Landing', allowedOrigins: ['https://a.test'], defaultRoles: [] },
  )
})

t.test('the sign-up snippet: the widget, its challenge with the key, the signup call', async (t) => {
  const service = 'https://auth.example.test'
  const key = `pk_${'A'.repeat(43)}`
  const html = signupSnippet(service, key, ['https://www.example.test', 'http://localhost:8080'])
  t.match(html, '<script type="module" src="./altcha.js"></script>', 'the widget from the page’s own copy')
  t.match(html, 'cp node_modules/altcha/dist/altcha.js altcha.js', 'and where that copy comes from')
  t.match(html, 'https://www.example.test, http://localhost:8080', 'the origins it must be served from')
  t.match(
    html,
    `<altcha-widget id="tessera-altcha" challengeurl="${service}/api/v1/signup/challenge"></altcha-widget>`,
  )
  t.notMatch(html, /https?:\/\/(?!auth\.example\.test|www\.example\.test|localhost:8080)/, 'no other host')
  const scripts = [...html.matchAll(/<script type="module">([\s\S]*?)<\/script>/g)].map((m) => m[1] ?? '')
  t.equal(scripts.length, 1, 'one inline script')
  const code = scripts[0] ?? ''
  t.doesNotThrow(() => new Script(code), 'it parses')
  t.match(code, `const TESSERA = "${service}"`)
  t.match(code, `const KEY = "${key}"`)
  t.match(code, "headers: { ...init?.headers, 'X-Publishable-Key': KEY }", 'the challenge asked with the key')
  t.match(code, 'return new Response(JSON.stringify(res.ok ? body.data : body)', 'the widget gets the data')
  t.match(code, 'await fetch(`${TESSERA}/api/v1/signup`, {')
  t.match(code, "method: 'POST'")
  t.match(code, "headers: { 'Content-Type': 'application/json', 'X-Publishable-Key': KEY }")
  t.match(code, "altcha: form.get('altcha')", 'the widget’s solution sent')

  const odd = signupSnippet('https://x.test"></altcha-widget><script>', 'pk_</script><b>', [
    'https://a.test--></x>',
  ])
  t.notMatch(odd, '"></altcha-widget><script>', 'an attribute cannot be closed')
  t.equal(odd.match(/<\/script>/g)?.length, 2, 'a string cannot close the script')
  t.equal(odd.match(/-->/g)?.length, 1, 'nor the comment')
})

t.test('a passkey act that failed in the browser: a sentence; any other failure: none', async (t) => {
  t.match(
    browserProblem(new DOMException('The operation either timed out or was not allowed.', 'NotAllowedError')),
    /cancelled/,
  )
  t.match(browserProblem(new DOMException('x', 'InvalidStateError')), /already holds/)
  const library = Object.assign(new Error('No available authenticator supported it'), {
    name: 'UnknownError',
    code: 'ERROR_AUTHENTICATOR_GENERAL_ERROR',
  })
  t.equal(
    browserProblem(library),
    'No available authenticator supported it',
    '@simplewebauthn/browser’s own words',
  )
  const refused = new TesseraError({
    status: 409,
    code: 'PASSKEYS_DISABLED',
    message: 'Passkeys are disabled',
  })
  t.equal(browserProblem(refused), null, 'the service’s answer is shown as every error is')
  t.equal(browserProblem(new TypeError('Failed to fetch')), null, 'so is the network’s')
  t.equal(browserProblem('NotAllowedError'), null)
  t.equal(browserProblem(null), null)
})

t.test(
  'afterSignIn, signInFor: a shared link’s screen survives the sign-in; nothing leads off the console',
  (t) => {
    t.equal(signInFor('/'), '/sign-in', 'the overview needs no next')
    t.equal(signInFor('/users/abc?x=1'), '/sign-in?next=%2Fusers%2Fabc%3Fx%3D1')
    t.equal(
      afterSignIn(new URL(signInFor('/users/abc?x=1'), 'http://h').search),
      '/users/abc?x=1',
      'round trip',
    )
    for (const [next, why] of [
      ['', 'none'],
      ['//evil.example/x', 'another host'],
      ['/\\evil.example', 'another host, backslashed'],
      ['https://evil.example', 'an absolute URL'],
      ['javascript:alert(1)', 'a script'],
      ['/sign-in?next=/users', 'the sign-in itself'],
      ['/users /x', 'a space'],
      ['/../x', 'a dot segment (the browser would leave /console)'],
      ['/%2e%2e/x', 'an encoded dot segment'],
      ['/reset-password?tenant=acme&token=theirs', 'a mail link’s form with someone else’s token'],
      ['/verify-email?tenant=acme&token=theirs', 'the other mail link'],
      ['/forgot-password', 'the forgotten-password form'],
    ]) {
      t.equal(afterSignIn(`?next=${encodeURIComponent(next!)}`), '/', `${why}: the overview`)
    }
    t.equal(afterSignIn('?next=%2Froles'), '/roles')
    const deep = '/keys/publishable/abc-1?x=1&y=2'
    t.equal(afterSignIn(`?next=${encodeURIComponent(deep)}`), deep, 'a detail page with its query')
    t.end()
  },
)

t.test(
  'every pattern attribute compiles as a browser compiles it (the v flag), or the browser ignores it',
  async (t) => {
    const { readdirSync, readFileSync } = await import('node:fs')
    const { join } = await import('node:path')
    const root = join(import.meta.dirname, '../../console/src')
    const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.tsx'))
    let seen = 0
    for (const file of files) {
      for (const m of readFileSync(join(root, file), 'utf8').matchAll(/\bpattern="([^"]*)"/g)) {
        seen++
        // What the HTML standard compiles: ^(?:pattern)$ with the v flag.
        t.doesNotThrow(() => new RegExp(`^(?:${m[1]})$`, 'v'), `${file}: ${m[1]}`)
      }
    }
    t.ok(seen >= 2, `${seen} patterns checked`)
  },
)

t.test(
  'the console’s modules: no import cycle, and ui/ (the kit) imports nothing of the console but ui/',
  async (t) => {
    const { existsSync, readdirSync, readFileSync, statSync } = await import('node:fs')
    const { dirname, join, relative } = await import('node:path')
    const root = join(import.meta.dirname, '../../console/src')
    const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => /\.tsx?$/.test(f))
    const isFile = (f: string) => existsSync(f) && statSync(f).isFile()
    /** Each module's relative imports of modules (a stylesheet is not one), as paths below console/src. */
    const imports = new Map<string, string[]>()
    const unresolved: string[] = []
    for (const file of files) {
      const source = readFileSync(join(root, file), 'utf8')
      const deps: string[] = []
      for (const m of source.matchAll(/^(?:import|export)[^'"]*['"](\.[^'"]+)['"]/gm)) {
        if (m[1]!.endsWith('.css')) continue
        const base = join(dirname(join(root, file)), m[1]!.replace(/\.js$/, ''))
        const hit = ['.ts', '.tsx', '/index.ts', '/index.tsx'].map((ext) => base + ext).find(isFile)
        if (hit) deps.push(relative(root, hit))
        else unresolved.push(`${file}: ${m[1]}`)
      }
      imports.set(file, deps)
    }
    t.ok(imports.size >= 50, `${imports.size} modules read`)
    t.same(unresolved, [], 'every relative import is a module of console/src')
    const outside = [...imports]
      .filter(([file]) => file.startsWith('ui/'))
      .flatMap(([file, deps]) => deps.filter((d) => !d.startsWith('ui/')).map((d) => `${file} → ${d}`))
    t.same(outside, [], 'ui/ imports only React, the SDK and ui/')
    // Depth-first, with the path so far: a module met again on its own path closes a cycle.
    const cycles: string[] = []
    const done = new Set<string>()
    const visit = (file: string, path: string[]) => {
      if (path.includes(file)) return void cycles.push([...path.slice(path.indexOf(file)), file].join(' → '))
      if (done.has(file)) return
      for (const dep of imports.get(file) ?? []) visit(dep, [...path, file])
      done.add(file)
    }
    for (const file of imports.keys()) visit(file, [])
    t.same(cycles, [], 'no module imports itself through others')
  },
)

t.test(
  'precompress: a .br and a .gz beside every text file of the build, the same bytes inside',
  async (t) => {
    const { mkdirSync, readFileSync, readdirSync, writeFileSync } = await import('node:fs')
    const { join } = await import('node:path')
    const { brotliDecompressSync, gunzipSync } = await import('node:zlib')
    const dir = t.testdir()
    mkdirSync(join(dir, 'assets'))
    const script = 'console.log("tessera");\n'.repeat(200)
    writeFileSync(join(dir, 'index.html'), '<!doctype html><p>hi</p>')
    writeFileSync(join(dir, 'assets/index-abc.js'), script)
    writeFileSync(join(dir, 'assets/logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]))
    const plugin = precompress(dir)
    t.equal(plugin.apply, 'build', 'only when building')
    ;(plugin.closeBundle as () => void)()
    const js = join(dir, 'assets/index-abc.js')
    t.equal(brotliDecompressSync(readFileSync(`${js}.br`)).toString(), script, 'brotli holds the file')
    t.equal(gunzipSync(readFileSync(`${js}.gz`)).toString(), script, 'gzip holds the file')
    t.ok(readFileSync(`${js}.gz`).length < script.length / 10, 'and is much smaller')
    t.same(readdirSync(dir).sort(), ['assets', 'index.html', 'index.html.br', 'index.html.gz'])
    t.notOk(readdirSync(join(dir, 'assets')).includes('logo.png.gz'), 'an image is left as it is')
  },
)

t.test('publishable keys: only the roles the caller may give are offered', async (t) => {
  const roles = [
    { name: 'admin', level: 100, permissions: ['users:read', 'roles:create'] },
    { name: 'member', level: 0, permissions: [] },
    { name: 'billing', level: 10, permissions: ['invoices:read'] },
    { name: 'senior', level: 50, permissions: ['invoices:read'] },
    { name: 'secret', level: 5, permissions: ['vault:open'] },
  ]
  const can = (p: string) => ['invoices:read', 'users:read'].includes(p)
  t.same(
    givableRoles(roles, ['billing'], can),
    ['member', 'billing'],
    'rank 10: not senior; not admin, not secret',
  )
  t.same(givableRoles(roles, [], can), [], 'no role: no rank, nothing to give')
  t.same(
    givableRoles(roles, [], () => true),
    ['member', 'billing', 'senior', 'secret'],
    'admin:*: no rank limit',
  )
})

t.test('sorting a table: the URL value, the next click, the order', async (t) => {
  t.equal(columnKey('Last login'), 'last-login', 'a heading as a URL key')
  t.equal(columnKey('Sign-ups per hour'), 'sign-ups-per-hour')
  const keys = ['user', 'last-login']
  t.same(parseSort('user', keys), { key: 'user', dir: 'asc' })
  t.same(parseSort('-last-login', keys), { key: 'last-login', dir: 'desc' })
  t.equal(parseSort('level', keys), null, 'a column this table lacks: no sort')
  t.equal(parseSort(null, keys), null)
  t.equal(parseSort('-', keys), null)
  t.equal(formatSort({ key: 'user', dir: 'desc' }), '-user')
  t.same(nextSort(null, 'user'), { key: 'user', dir: 'asc' }, 'first click: ascending')
  t.same(nextSort({ key: 'user', dir: 'asc' }, 'user'), { key: 'user', dir: 'desc' }, 'then descending')
  t.same(nextSort({ key: 'user', dir: 'desc' }, 'user'), { key: 'user', dir: 'asc' }, 'and back')
  t.same(nextSort({ key: 'user', dir: 'desc' }, 'level'), { key: 'level', dir: 'asc' }, 'another column')

  const rows = [
    { n: 'b', v: 10 as number | null },
    { n: 'a', v: 9 },
    { n: 'c', v: null },
    { n: 'B', v: 10 },
  ]
  const names = (r: { n: string }[]) => r.map((x) => x.n)
  t.same(
    names(sortRows(rows, { key: 'v', dir: 'asc' }, (r) => r.v)),
    ['a', 'b', 'B', 'c'],
    'numbers as numbers',
  )
  t.same(
    names(sortRows(rows, { key: 'v', dir: 'desc' }, (r) => r.v)),
    ['b', 'B', 'a', 'c'],
    'descending; equal rows keep their order, the empty one stays last',
  )
  t.same(names(sortRows(rows, { key: 'n', dir: 'asc' }, (r) => r.n)), ['a', 'b', 'B', 'c'], 'case aside')
  const items = ['item 10', 'item 9', 'item 1']
  t.same(
    sortRows(items, { key: 'x', dir: 'asc' }, (s) => s),
    ['item 1', 'item 9', 'item 10'],
    'digits by value',
  )
  t.same(
    rows.map((r) => r.n),
    ['b', 'a', 'c', 'B'],
    'the rows given are not reordered',
  )
})

t.test('a tenant’s page offers only what the service would do', async (t) => {
  const none = { rename: false, status: false, remove: false }
  t.same(
    tenantActions(['admin:*'], false),
    { rename: true, status: true, remove: true },
    'platform admin, another',
  )
  t.same(
    tenantActions(['admin:*'], true),
    { rename: true, status: false, remove: false },
    'platform admin, the platform tenant: never deactivated or deleted',
  )
  t.same(
    tenantActions(['tenants:read', 'tenants:update', 'users:*'], true),
    { rename: true, status: false, remove: false },
    'a tenant admin, its own: the name only',
  )
  t.same(tenantActions(['tenants:read'], true), none, 'a reader: nothing')
  t.same(
    tenantActions(['tenants:update', 'tenants:delete'], false),
    none,
    'another tenant without admin:*: not even seen',
  )
})
