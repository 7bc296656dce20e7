import t from 'tap'
import { readFileSync } from 'node:fs'
import { request } from 'node:http'
import { createTestDatabaseUrl, defaultBackend } from '../helpers/db.js'
import { startService, waitReady } from '../helpers/service-process.js'
import { PLATFORM_KEY } from '../helpers/app.js'
import { loadConfig } from '../../src/config.js'

// WORKERS (docs/decisions.md D15): n processes on one port, a dead worker replaced, and a stop that
// drains every worker. Several processes need one PostgreSQL database.

const children = (pid: number): number[] => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number)
  } catch {
    return []
  }
}

/** One POST /login on a connection of its own (node:cluster hands each new connection to the next worker). */
function loginOnNewConnection(base: string, forwardedFor: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({
      tenantCode: 'nobody-here',
      identifier: 'a@example.test',
      password: 'x-123456',
    })
    const req = request(
      `${base}/api/v1/login`,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
      },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

const until = async (check: () => boolean, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (check()) return true
    await new Promise((r) => setTimeout(r, 100))
  }
  return check()
}

t.test('workers: WORKERS is validated', async (t) => {
  t.equal(loadConfig({}).workers, 1)
  t.equal(loadConfig({ WORKERS: '3', DATABASE_URL: 'postgres://h/db' }).workers, 3)
  t.ok(loadConfig({ WORKERS: 'auto', DATABASE_URL: 'postgres://h/db' }).workers >= 1)
  t.throws(() => loadConfig({ WORKERS: '0' }), /WORKERS must be auto or an integer/)
  t.throws(() => loadConfig({ WORKERS: '2' }), /WORKERS above 1 needs DATABASE_URL=postgres/)
  t.throws(() => loadConfig({ WORKERS: '2', DATABASE_URL: 'memory://' }), /needs DATABASE_URL=postgres/)
})

t.test(
  'workers: two processes on one port; a dead one is replaced; SIGTERM drains all',
  {
    skip: defaultBackend() !== 'postgres' ? 'needs TEST_BACKEND=postgres: workers share one database' : false,
  },
  async (t) => {
    const { url, drop } = await createTestDatabaseUrl('postgres')
    t.teardown(drop)
    const s = await startService({
      DATABASE_URL: url,
      WORKERS: '2',
      BOOTSTRAP_CLIENT_KEY: PLATFORM_KEY,
      JWT_SECRET: 'workers-test-jwt-secret-0123456789abcdef',
      SECRETS_KEY: 'workers-test-secrets-key-0123456789abcd',
    })
    t.teardown(() => {
      if (s.child.exitCode === null) s.child.kill('SIGKILL')
    })
    await waitReady(s, 60_000)
    const primary = s.child.pid as number
    t.ok(await until(() => children(primary).length === 2, 30_000), 'two workers')
    // No REDIS_URL: the per-IP counters live in the primary, one budget per address whichever worker
    // answers (contract section 22). Before, each worker counted alone: 10 logins a minute with 2.
    const logins: number[] = []
    for (let i = 0; i < 12; i++) logins.push(await loginOnNewConnection(s.base, '203.0.113.9'))
    t.same(logins, [404, 404, 404, 404, 404, 429, 429, 429, 429, 429, 429, 429], 'one login budget of 5')
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${s.base}/api/v1/health`)
      t.equal(res.status, 200)
    }
    // The caches of both workers follow a change made through either (the change channel, D16).
    let ip = 0
    const send = (method: string, path: string, key: string, body?: object) =>
      fetch(`${s.base}${path}`, {
        method,
        headers: {
          'x-client-key': key,
          'x-forwarded-for': `198.51.100.${++ip}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
      })
    const created = await send('POST', '/api/v1/client-keys', PLATFORM_KEY, {
      name: 'w',
      scopes: ['client-keys:read'],
    })
    t.equal(created.status, 201)
    const key = ((await created.json()) as { data: { id: string; key: string } }).data
    for (let i = 0; i < 6; i++)
      t.equal((await send('GET', '/api/v1/client-keys/tenant', key.key)).status, 200)
    t.equal((await send('POST', `/api/v1/client-keys/${key.id}/revoke`, PLATFORM_KEY)).status, 200)
    const revokedAt = Date.now()
    let refusedInARow = 0
    while (refusedInARow < 6 && Date.now() - revokedAt < 3000) {
      refusedInARow =
        (await send('GET', '/api/v1/client-keys/tenant', key.key)).status === 401 ? refusedInARow + 1 : 0
    }
    const delay = Date.now() - revokedAt
    t.equal(refusedInARow, 6, `every worker refuses the revoked key (six in a row after ${delay} ms)`)
    t.ok(delay < 1000)
    const [first] = children(primary)
    process.kill(first as number, 'SIGKILL')
    t.ok(
      await until(
        () => children(primary).length === 2 && !children(primary).includes(first as number),
        30_000,
      ),
      'the killed worker was replaced',
    )
    await waitReady(s, 30_000)
    s.child.kill('SIGTERM')
    t.equal(await s.exited, 0, 'the primary exits 0 once every worker has drained')
    t.same(children(primary), [], 'no worker is left')
  },
)
