import t from 'tap'
import { sql } from 'kysely'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { call, type Req } from '../helpers/call.js'
import { LARGE_TOTAL } from '../../src/db/paginate.js'

// List totals (src/db/paginate.ts): exact below LARGE_TOTAL; a larger one is counted once and reused
// for 10 seconds per exact query, so paging through a big tenant's audit log does not count a million
// rows per page.

t.test('listAuthLogs: a large total is reused for a while, a small one is always exact', async (t) => {
  const app = await buildTestApp(t)
  const insert = (tenantId: string, n: number) =>
    sql`insert into tessera_audit.audit_log (tenant_id, action, success, metadata)
      select ${tenantId}::uuid, 'LOGIN', true, '{}'::jsonb from generate_series(1, ${n})`.execute(
      app.ctx.dbs.main,
    )
  const big = await createTenant(app)
  const small = await createTenant(app)
  const bigToken = await tokenFor(app, await createUser(app, big, { roles: ['admin'] }))
  const smallToken = await tokenFor(app, await createUser(app, small, { roles: ['admin'] }))
  const total = async (token: string, query: Req<'listAuthLogs'>['query'] = {}) =>
    (await call(app, 'listAuthLogs', { token }, { query: { limit: 5, ...query } })).data.total

  await insert(big.id, LARGE_TOTAL)
  t.equal(await total(bigToken), LARGE_TOTAL, 'counted exactly the first time')
  await insert(big.id, 3)
  t.equal(await total(bigToken), LARGE_TOTAL, 'then reused: it lags the rows added since')
  t.equal(await total(bigToken, { offset: 5 }), LARGE_TOTAL, 'on every page of the same query')
  t.equal(await total(bigToken, { action: 'LOGIN' }), LARGE_TOTAL + 3, 'another filter is its own query')
  const page = await call(app, 'listAuthLogs', { token: bigToken }, { query: { limit: 5 } })
  t.equal(page.body.data.items.length, 5, 'the page itself is always read')

  await insert(small.id, 2)
  t.equal(await total(smallToken), 2)
  await insert(small.id, 1)
  t.equal(await total(smallToken), 3, 'a small total is counted every time')
})
