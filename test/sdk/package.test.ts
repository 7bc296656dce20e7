import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { root } from '../helpers/service-process.js'

// Why a longer bound than the suite's 120 s: npm pack, npm install and tsc in a fresh project take minutes when the suite's other groups share the two cores.
t.setTimeout(360_000)

// `npm pack` of clients/typescript gives a tarball that installs into an empty project, runs there under
// plain Node, and type-checks there with `tsc --strict`, where deliberate mistakes are compile errors.
// One npm install (the tarball; openapi-fetch comes from the npm registry).

const run = promisify(execFile)
const pkgDir = join(root, 'clients/typescript')
const tsc = join(root, 'node_modules/typescript/bin/tsc')

async function sh(
  cmd: string,
  args: string[],
  cwd: string,
  timeout = 120_000,
): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(cmd, args, { cwd, timeout, maxBuffer: 16 * 1024 * 1024 })
    return { code: 0, out: stdout + stderr }
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string; message: string }
    return {
      code: typeof e.code === 'number' ? e.code : 1,
      out: `${e.stdout ?? ''}${e.stderr ?? ''}${e.message}`,
    }
  }
}

const tsconfig = (file: string) =>
  JSON.stringify({
    compilerOptions: {
      strict: true,
      noEmit: true,
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2022', 'DOM'],
      types: [],
      skipLibCheck: false,
    },
    files: [file],
  })

// The README's snippets, as a consumer writes them.
const CONSUMER = `import {
  SecondFactorRequired,
  TesseraError,
  createTesseraClient,
  isTesseraError,
  operations,
  type ErrorCode,
  type Tokens,
  type components,
} from '@tessera/client'

declare const password: string
declare const clientKey: string
declare function showQrCode(svg: string, secret: string): void
declare function askForCode(): Promise<string>
declare function showOnce(codes: string[]): void

export async function quickStart(): Promise<void> {
  const tessera = createTesseraClient({ baseUrl: 'http://127.0.0.1:3000' })
  await tessera.login({ tenantCode: 'acme', identifier: 'admin@acme.test', password: 'S3cure-pass' })
  const me = await tessera.GET('/api/v1/me') // typed: me.email, me.roles, me.permissions
  console.log(me.email, me.permissions)
}

export async function session(userId: string): Promise<string> {
  const tessera = createTesseraClient({
    baseUrl: 'https://auth.example.com',
    tokens: JSON.parse(localStorage.getItem('tessera') ?? 'null') as Tokens | null,
    onTokens: (tokens) =>
      tokens ? localStorage.setItem('tessera', JSON.stringify(tokens)) : localStorage.removeItem('tessera'),
  })
  await tessera.login({ tenantCode: 'acme', identifier: 'ana@acme.test', password })
  const user: components['schemas']['User'] = await tessera.GET('/api/v1/users/{userId}', {
    params: { path: { userId } },
  })
  const page = await tessera.GET('/api/v1/auth-logs', { params: { query: { action: 'LOGIN', since: '24h' } } })
  const role = await tessera.POST('/api/v1/roles', { body: { name: 'editor', level: 50, permissions: ['users:read'] } })
  const { revoked } = await tessera.logout()
  const raw = await tessera.raw.GET('/api/v1/me')
  const email: string | null | undefined = raw.data?.data.email
  return [user.email, page.items[0]?.action, role.name, revoked, email, operations.getMe.path].join()
}

export async function forgottenPassword(token: string, newPassword: string): Promise<boolean> {
  const tessera = createTesseraClient({ baseUrl: 'http://127.0.0.1:3000' })
  await tessera.POST('/api/v1/password/forgot', { body: { tenantCode: 'acme', identifier: 'ana@acme.test' } })
  await tessera.POST('/api/v1/password/reset', { body: { tenantCode: 'acme', token, newPassword } })
  const verified = await tessera.POST('/api/v1/email/verify', { body: { tenantCode: 'acme', token } })
  return verified.emailVerified
}

export async function backEnd(): Promise<string> {
  const backend = createTesseraClient({ baseUrl: 'http://127.0.0.1:3000', clientKey, retry: { retries: 1 } })
  const created = await backend.POST('/api/v1/register', { body: { email: 'bob@acme.test', password } })
  return created.id
}

export async function secondFactor(tessera = createTesseraClient({ baseUrl: 'http://127.0.0.1:3000' })): Promise<string> {
  try {
    await tessera.login({ tenantCode: 'acme', identifier: 'ana@acme.test', password })
  } catch (err) {
    if (!(err instanceof SecondFactorRequired)) throw err
    if (err.enrollment) {
      const { qrCodeSvg, secret } = await tessera.setupSecondFactor(err.mfaToken)
      showQrCode(qrCodeSvg, secret)
    }
    const { recoveryCodes } = await tessera.completeLogin({ mfaToken: err.mfaToken, code: await askForCode() })
    if (recoveryCodes) showOnce(recoveryCodes)
  }
  return (await tessera.GET('/api/v1/me')).email ?? ''
}

export async function errors(tessera = createTesseraClient({ baseUrl: 'http://127.0.0.1:3000' })): Promise<string> {
  try {
    await tessera.login({ tenantCode: 'acme', identifier: 'ana@acme.test', password: 'wrong' })
    return 'in'
  } catch (err) {
    if (isTesseraError(err, 'INVALID_CREDENTIALS')) return 'retry'
    if (err instanceof TesseraError) {
      const code: ErrorCode = err.code
      const id: string | null = err.requestId
      return [err.status, code, id, err.retryAfterSeconds, JSON.stringify(err.details)].join()
    }
    throw err
  }
}
`

// Each line marked \`// error:\` must be reported by tsc, and no other line.
const MISTAKES = `import { createTesseraClient, type ErrorCode } from '@tessera/client'

const tessera = createTesseraClient({ baseUrl: 'http://127.0.0.1:3000' })

export async function mistakes(): Promise<void> {
  await tessera.GET('/api/v1/mee') // error: a path the document does not have
  await tessera.DELETE('/api/v1/me') // error: a method the path does not have
  await tessera.login({ tenantCode: 'acme', identifier: 'ana@acme.test' }) // error: a required field is missing
  await tessera.login({ tenantCode: 'acme', identifer: 'ana@acme.test', password: 'x' }) // error: misspelt field
  await tessera.POST('/api/v1/register', { body: { email: 'b@acme.test', password: 'x', emailVerifed: true } }) // error: misspelt optional field
  await tessera.GET('/api/v1/users/{userId}') // error: the path parameter is missing
  await tessera.GET('/api/v1/auth-logs', { params: { query: { acton: 'LOGIN' } } }) // error: misspelt query parameter
  const me = await tessera.GET('/api/v1/me')
  console.log(me.emial) // error: misspelt response property
  await tessera.completeLogin({ mfaToken: 'mfa' }) // error: the second-factor code is missing
  const code: ErrorCode = 'NOT_A_CODE' // error: not an error code of the document
  console.log(code)
}
`

const RUNTIME = `import { createTesseraClient, TesseraError, operations } from '@tessera/client'
const tessera = createTesseraClient({
  baseUrl: 'http://tessera.test',
  fetch: async (request) =>
    new Response(JSON.stringify({ success: false, error: 'User not found', code: 'USER_NOT_FOUND' }), {
      status: 404,
      headers: { 'content-type': 'application/json', 'x-request-id': 'packed-1' },
    }),
})
try {
  await tessera.GET('/api/v1/users/{userId}', { params: { path: { userId: 'u1' } } })
  console.log(JSON.stringify({ ok: true }))
} catch (err) {
  console.log(JSON.stringify({
    isTesseraError: err instanceof TesseraError,
    status: err.status, code: err.code, requestId: err.requestId,
    getMe: operations.getMe,
  }))
}
`

t.test(
  'npm pack: the tarball installs into an empty project, runs, and type-checks with tsc --strict',
  async (t) => {
    const tmp = await mkdtemp(join(tmpdir(), 'tessera-sdk-pack-'))
    t.teardown(() => rm(tmp, { recursive: true, force: true }))

    // `prepack` builds dist/ with tsc first.
    const packed = await sh('npm', ['pack', '--pack-destination', tmp, '--loglevel=error'], pkgDir)
    t.equal(packed.code, 0, 'npm pack succeeds')
    if (packed.code !== 0) return void t.comment(packed.out)
    const tarball = (await readdir(tmp)).find((f) => f.endsWith('.tgz'))
    t.equal(tarball, 'tessera-client-0.1.0.tgz')
    if (!tarball) return
    const listing = (await sh('tar', ['-tzf', join(tmp, tarball)], tmp)).out.split('\n')
    for (const file of [
      'package/package.json',
      'package/README.md',
      'package/dist/index.js',
      'package/dist/index.d.ts',
      'package/dist/generated/schema.d.ts',
      'package/src/generated/schema.ts',
    ]) {
      t.ok(listing.includes(file), `the tarball has ${file}`)
    }
    t.notOk(
      listing.some((f) => f.includes('node_modules') || f.endsWith('.tgz')),
      'and no dependencies or old tarballs',
    )
    for (const file of listing.filter((f) => f.startsWith('package/dist/') && f.endsWith('.js'))) {
      const text = await sh('tar', ['-xzOf', join(tmp, tarball), file], tmp)
      t.notMatch(text.out, /from ["']node:|require\(/, `${file} imports no Node module`)
    }

    const project = join(tmp, 'consumer')
    await mkdir(project)
    await writeFile(
      join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    )
    const install = await sh(
      'npm',
      ['install', join(tmp, tarball), '--no-audit', '--no-fund', '--loglevel=error'],
      project,
      240_000,
    )
    if (install.code !== 0) {
      t.fail(
        'npm install of the packed tarball failed. It fetches openapi-fetch from the npm registry: is ' +
          `the registry reachable from here (npm config get registry)?\n${install.out}`,
      )
      return
    }
    const installed = JSON.parse(
      await readFile(join(project, 'node_modules/@tessera/client/package.json'), 'utf8'),
    ) as { name: string }
    t.equal(installed.name, '@tessera/client', 'installed from the tarball')
    await readFile(join(project, 'node_modules/openapi-fetch/package.json'), 'utf8').then(
      () => t.pass('with openapi-fetch from the registry'),
      () => t.fail('openapi-fetch was not installed'),
    )

    await writeFile(join(project, 'run.mjs'), RUNTIME)
    const ran = await sh(process.execPath, ['run.mjs'], project)
    t.equal(ran.code, 0, 'the package runs under plain Node')
    t.same(JSON.parse(ran.out.trim().split('\n').at(-1) ?? '{}'), {
      isTesseraError: true,
      status: 404,
      code: 'USER_NOT_FOUND',
      requestId: 'packed-1',
      getMe: { method: 'get', path: '/api/v1/me', auth: 'jwt' },
    })

    await writeFile(join(project, 'consumer.ts'), CONSUMER)
    await writeFile(join(project, 'tsconfig.json'), tsconfig('consumer.ts'))
    const good = await sh(process.execPath, [tsc, '--strict', '-p', 'tsconfig.json'], project)
    t.equal(good.code, 0, 'the README usage type-checks with tsc --strict')
    if (good.code !== 0) t.comment(good.out)

    await writeFile(join(project, 'mistakes.ts'), MISTAKES)
    await writeFile(join(project, 'tsconfig.mistakes.json'), tsconfig('mistakes.ts'))
    const bad = await sh(process.execPath, [tsc, '--strict', '-p', 'tsconfig.mistakes.json'], project)
    t.not(bad.code, 0, 'tsc fails on the mistakes')
    const reported = new Set(
      [...bad.out.matchAll(/^mistakes\.ts\((\d+),\d+\): error TS\d+/gm)].map((m) => Number(m[1])),
    )
    const lines = MISTAKES.split('\n')
    lines.forEach((line, i) => {
      const marker = /\/\/ error: (.*)$/.exec(line)
      if (marker) t.ok(reported.has(i + 1), `reported: ${marker[1]} (line ${i + 1})`)
    })
    const unexpected = [...reported].filter((n) => !lines[n - 1]?.includes('// error:'))
    t.same(unexpected, [], 'and nothing else')
    if (unexpected.length > 0) t.comment(bad.out)
  },
)
