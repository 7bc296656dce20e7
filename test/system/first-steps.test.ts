import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { call, runCli, startService, waitReady, type ServiceProcess } from '../helpers/service-process.js'

// Why a longer bound than the suite's 120 s: it starts the service five times on fresh embedded databases, which takes minutes when the suite's other groups share the two cores.
t.setTimeout(360_000)

// The README's "First steps" on the embedded database, as a new user runs them in two terminals.
const KEY = 'ck_' + 'f'.repeat(43)
const admin = { email: 'admin@acme.test', password: 'S3cure-pass' }

function envFor(dir: string): Record<string, string> {
  return {
    DATA_DIR: dir,
    BOOTSTRAP_CLIENT_KEY: KEY,
    JWT_SECRET: 'first-steps-jwt-secret-0123456789abcdef',
    SECRETS_KEY: 'first-steps-secrets-key-0123456789abcd',
  }
}

async function stop(s: ServiceProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  s.child.kill(signal)
  await s.exited
}

/** POST /tenants through the API with the bootstrap key, as the README's first steps do with curl. */
const createTenant = (base: string, code: string, name: string) =>
  call(base, 'POST', '/api/v1/tenants', { code, name, admin }, { 'x-client-key': KEY })

const login = (base: string, tenantCode: string) =>
  call(base, 'POST', '/api/v1/login', { tenantCode, identifier: admin.email, password: admin.password })

t.test('first steps: the CLI refuses a held directory, the API creates, a restart keeps it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-first-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const env = envFor(dir)

  // Why info: the line that says where the console is (the rest of the file keeps warn).
  const a = await startService({ ...env, LOG_LEVEL: 'info' })
  t.teardown(() => a.child.kill('SIGKILL'))
  await waitReady(a)
  // The README's first step is the console: the service's own entry point serves it (make test builds it
  // first, as npm start does).
  const page = await fetch(`${a.base}/console/`)
  t.equal(page.status, 200, '/console is served')
  t.match(page.headers.get('content-type'), /^text\/html/)
  t.match(await page.text(), /<script type="module"/, 'the built page, not a placeholder')
  t.match(a.output(), `the console is at ${a.base}/console`, 'the output says where the console is')

  const cli = await runCli(['tenant', 'create', '--code', 'acme', '--name', 'Acme', '--json'], env)
  t.not(cli.code, 0, 'the CLI beside a running service fails')
  const message = (JSON.parse(cli.stdout) as { error: string }).error
  t.match(message, dir, 'naming the directory')
  t.match(message, `pid ${a.child.pid}`, "and the holder's pid")
  t.match(message, /API/, 'and what to do instead')
  t.equal((await login(a.base, 'acme')).json.code, 'TENANT_NOT_FOUND', 'nothing was written')

  const created = await createTenant(a.base, 'acme', 'Acme')
  t.equal(created.status, 201, 'the tenant is created through the API')
  const tenantId = (created.json.data as { id: string }).id
  const key = await call(
    a.base,
    'POST',
    '/api/v1/client-keys',
    { tenantId, name: 'signup', scopes: ['users:create'] },
    { 'x-client-key': KEY },
  )
  t.equal(key.status, 201, 'and its Client Key')
  t.equal((await login(a.base, 'acme')).status, 200, 'its admin logs in')

  await stop(a)
  const offline = await runCli(['tenant', 'create', '--code', 'beta', '--name', 'Beta', '--json'], env)
  t.equal(offline.code, 0, 'with the service stopped, the CLI works')

  const b = await startService(env)
  t.teardown(() => b.child.kill('SIGKILL'))
  await waitReady(b)
  t.equal((await login(b.base, 'acme')).status, 200, 'after a restart the tenant still logs in')
  const tenants = await call(b.base, 'GET', '/api/v1/tenants?limit=100', undefined, { 'x-client-key': KEY })
  const codes = (tenants.json.data as { items: { code: string }[] }).items.map((x) => x.code)
  t.ok(codes.includes('beta'), "and the CLI's tenant is there")
  await stop(b)
})

t.test(
  'a second service on one directory exits at once; kill -9 leaves a lock the next start takes',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-two-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const env = envFor(dir)

    const a = await startService(env)
    t.teardown(() => a.child.kill('SIGKILL'))
    await waitReady(a)
    const created = await createTenant(a.base, 'acme', 'Acme')
    t.equal(created.status, 201)

    const second = await startService(env)
    t.teardown(() => second.child.kill('SIGKILL'))
    t.not(await second.exited, 0, 'the second service exits with an error')
    t.match(second.output(), dir, 'naming the directory')
    t.match(second.output(), `pid ${a.child.pid}`, "and the holder's pid")
    t.equal((await login(a.base, 'acme')).status, 200, 'the first keeps serving')

    const late = await createTenant(a.base, 'late', 'Late')
    t.equal(late.status, 201, 'a write answered just before the crash')
    await stop(a, 'SIGKILL')

    const c = await startService(env)
    t.teardown(() => c.child.kill('SIGKILL'))
    await waitReady(c)
    t.pass('the next start after kill -9 needs no manual step')
    t.equal((await login(c.base, 'acme')).status, 200, 'every write answered before the kill is there')
    t.equal((await login(c.base, 'late')).status, 200)
    await stop(c)
  },
)
