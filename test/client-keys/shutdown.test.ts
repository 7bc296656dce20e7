import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { Pool } from 'undici'
import { openDatabase } from '../../src/db/connect.js'
import { createTestDatabaseUrl, defaultBackend } from '../helpers/db.js'
import { createKey, createTenant } from '../helpers/fixtures.js'
import { buildAppOn } from '../helpers/app.js'

// docs/decisions.md D11: on a graceful stop the buffered usage log is flushed; no row is lost. The
// database must outlive the app to count the rows afterwards: a PGlite data directory on disk, or a
// PostgreSQL database of its own.
const MIN_SERVED = 200

t.test('no usage row is lost across a graceful shutdown under load', async (t) => {
  const backend = defaultBackend()
  let env: Record<string, string>
  let cleanup: () => Promise<void>
  if (backend === 'postgres') {
    const { url, drop } = await createTestDatabaseUrl('postgres')
    env = { DATABASE_URL: url }
    cleanup = drop
  } else {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-usage-'))
    env = { DATA_DIR: dir }
    cleanup = () => rm(dir, { recursive: true, force: true })
  }
  t.teardown(() => cleanup())

  const app = await buildAppOn(env)
  const tenant = await createTenant(app)
  const key = await createKey(app, tenant, ['client-keys:read'])
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const pool = new Pool(address, { connections: 32 })
  t.teardown(() => pool.destroy())

  const outcomes = new Map<string, number>()
  const bump = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1)
  let next = 0
  // Each worker sends requests back to back until the service stops taking them.
  const worker = async () => {
    for (;;) {
      const i = next++
      try {
        const r = await pool.request({
          method: 'GET',
          path: '/api/v1/client-keys/tenant?limit=1',
          // Why a distinct forwarded address: the per-IP budget (100/min) must not end the load early.
          headers: {
            'x-client-key': key.value,
            'x-forwarded-for': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
          },
        })
        await r.body.dump()
        bump(String(r.statusCode))
        if (r.statusCode === 503) return
      } catch {
        bump('connection error')
        return
      }
    }
  }
  const workers = Array.from({ length: 32 }, worker)
  // Why by count and at least 1.2 s: a busy machine serves fewer requests a second; the stop must still
  // come under load, after timed flushes, with rows both written and buffered.
  const started = Date.now()
  while ((outcomes.get('200') ?? 0) < MIN_SERVED || Date.now() - started < 1200) {
    if (Date.now() - started > 30_000) break
    await new Promise((r) => setTimeout(r, 20))
  }
  const buffered = app.keyUsage.counters().buffered
  const closing = app.close()
  await Promise.all(workers)
  await closing
  const counters = app.keyUsage.counters()

  const served = outcomes.get('200') ?? 0
  t.comment(`outcomes ${JSON.stringify(Object.fromEntries(outcomes))}; buffered at close ${buffered}`)
  t.ok(served >= MIN_SERVED, `under load (${served} requests served)`)
  t.same(
    [...outcomes.keys()].filter((k) => !['200', '503', 'connection error'].includes(k)),
    [],
    'only 200, 503 or a refused connection',
  )
  t.equal(counters.dropped, 0, 'nothing dropped')
  t.equal(counters.buffered, 0, 'nothing left in memory')

  const reopened = await openDatabase(env.DATABASE_URL, { dataDir: env.DATA_DIR ?? '' })
  t.teardown(() => reopened.close())
  const { n } = await reopened.db
    .selectFrom('client_key_usage')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('key_id', '=', key.id)
    .executeTakeFirstOrThrow()
  t.equal(Number(n), served, 'one stored row per served request')
  const last = await reopened.db
    .selectFrom('client_keys')
    .select('last_used_at')
    .where('id', '=', key.id)
    .executeTakeFirstOrThrow()
  t.ok(last.last_used_at, 'last_used_at written')
})
