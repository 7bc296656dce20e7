import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, createUser, platformKey, routeToOwnDatabase } from '../helpers/fixtures.js'
import { call, login, refresh } from '../helpers/call.js'

// updateTenant (openapi/paths/tenants.yaml): a tenant set to INACTIVE has every session revoked
// in the same transaction; reactivating it revives none of them.

/** updateTenant { status } with the platform key; returns the status it answered. */
const setStatus = async (app: FastifyInstance, id: string, status: 'ACTIVE' | 'INACTIVE') =>
  (await call(app, 'updateTenant', platformKey, { params: { id }, body: { status } })).status

t.test('updateTenant: INACTIVE ends every session of the tenant', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const bystander = await createTenant(app)
  const users = [await createUser(app, tenant), await createUser(app, tenant)] as const
  const outsider = await createUser(app, bystander)
  const db = app.ctx.dbs.forTenant(tenant.id)

  t.test('200: sessions and refresh tokens revoked; ACTIVE again revives none (401)', async (t) => {
    const pairs = []
    for (const u of users) {
      const res = await login(app, tenant.code, u.email)
      t.equal(res.status, 200)
      pairs.push(res.body.data as { refreshToken: string })
    }
    // A rotated session too: its successor is the live token.
    const [first, second] = pairs
    if (!first || !second) throw new Error('expected a login per user')
    const rotated = await refresh(app, first.refreshToken)
    t.equal(rotated.status, 200)
    const live = [rotated.body.data.refreshToken as string, second.refreshToken]
    const theirs = (await login(app, bystander.code, outsider.email)).body.data as { refreshToken: string }

    const off = await call(app, 'updateTenant', platformKey, {
      params: { id: tenant.id },
      body: { status: 'INACTIVE' },
    })
    t.equal(off.status, 200)
    const sessions = await db
      .selectFrom('sessions')
      .select(['revoked_at', 'revoked_reason'])
      .where('tenant_id', '=', tenant.id)
      .execute()
    t.equal(sessions.length, 2)
    t.ok(
      sessions.every((s) => s.revoked_at !== null),
      'every session row is revoked',
    )
    t.same(
      sessions.map((s) => s.revoked_reason),
      ['tenant_inactive', 'tenant_inactive'],
    )
    const liveTokens = await db
      .selectFrom('refresh_tokens')
      .select('id')
      .where('tenant_id', '=', tenant.id)
      .where('revoked_at', 'is', null)
      .execute()
    t.equal(liveTokens.length, 0, 'every refresh token is revoked')

    const on = await call(app, 'updateTenant', platformKey, {
      params: { id: tenant.id },
      body: { status: 'ACTIVE' },
    })
    t.equal(on.status, 200)
    for (const refreshToken of live) {
      const res = await refresh(app, refreshToken)
      t.equal(res.status, 401, 'an old refresh token stays dead')
      t.equal(res.body.code, 'INVALID_REFRESH_TOKEN')
    }
    t.equal((await login(app, tenant.code, users[0].email)).status, 200, 'a new login works')
    const other = await refresh(app, theirs.refreshToken)
    t.equal(other.status, 200, 'another tenant’s sessions are untouched')
  })

  t.test('200: a rename alone (or ACTIVE) revokes nothing', async (t) => {
    const u = await createUser(app, tenant)
    const pair = (await login(app, tenant.code, u.email)).body.data as { refreshToken: string }
    t.equal(
      (
        await call(app, 'updateTenant', platformKey, {
          params: { id: tenant.id },
          body: { name: 'New name' },
        })
      ).status,
      200,
    )
    t.equal(await setStatus(app, tenant.id, 'ACTIVE'), 200)
    t.equal((await refresh(app, pair.refreshToken)).status, 200)
  })
})

t.test(
  'updateTenant: INACTIVE ends the sessions of a tenant routed to its own database',
  { skip: process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL (PostgreSQL)' },
  async (t) => {
    const app = await buildTestApp(t, { DATABASE_ROUTING_ALLOWED_HOSTS: '127.0.0.1' })
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    const target = await routeToOwnDatabase(t, app, tenant)
    const pair = (await login(app, tenant.code, user.email)).body.data as { refreshToken: string }

    t.equal(await setStatus(app, tenant.id, 'INACTIVE'), 200)
    const sessions = await target.db
      .selectFrom('sessions')
      .select(['revoked_at', 'revoked_reason'])
      .where('tenant_id', '=', tenant.id)
      .execute()
    t.equal(sessions.length, 1)
    t.equal(sessions[0]?.revoked_reason, 'tenant_inactive', 'revoked in the routed database')
    t.equal(await setStatus(app, tenant.id, 'ACTIVE'), 200)
    const res = await refresh(app, pair.refreshToken)
    t.equal(res.status, 401)
    t.equal(res.body.code, 'INVALID_REFRESH_TOKEN')
  },
)
