import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildTestApp } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import {
  createTenant,
  freshIp,
  insertRole,
  keyCred,
  userWithToken,
  type TenantFx,
} from '../helpers/fixtures.js'
import { ORIGIN, PK_ENV, pk, solvedChallenge, tenantWithKey } from './support.js'

// Contract section 26 on publishable keys: their default roles keep the hierarchy rule of section 6 at
// creation and at every PATCH, the record names its creating user, and a replayed ALTCHA solution is
// refused before it counts against the key's signupsPerHour.

const PASSWORD = 'Signup-pass-1'
const email = () => `r-${Math.random().toString(36).slice(2, 10)}@example.test`

/** The tenant's publishable keys (id and default roles), straight from the database. */
function storedKeys(app: FastifyInstance, tenant: TenantFx) {
  return app.ctx.dbs.main
    .selectFrom('publishable_keys')
    .select(['id', 'default_roles'])
    .where('tenant_id', '=', tenant.id)
    .execute()
}

/**
 * A tenant with roles at levels 1, 5 and 100, each holding only `auth:logs` (so containment holds for a
 * caller with it, and the level alone decides), and a user of level 5 who manages publishable keys.
 */
async function rankedTenant(app: FastifyInstance) {
  const tenant = await createTenant(app)
  await insertRole(app, tenant, 'pk-manager', 5, [
    'client-keys:create',
    'client-keys:read',
    'client-keys:update',
    'auth:logs',
  ])
  await insertRole(app, tenant, 'low', 1, ['auth:logs'])
  await insertRole(app, tenant, 'peer', 5, ['auth:logs'])
  await insertRole(app, tenant, 'high', 100, ['auth:logs'])
  const manager = await userWithToken(app, tenant, { roles: ['pk-manager'] })
  return { tenant, manager }
}

t.test('publishable keys: the third review', async (t) => {
  const app = await buildTestApp(t, PK_ENV)

  t.test(
    'createPublishableKey: 403 ROLE_HIERARCHY_VIOLATION for a default role above the caller’s level; nothing created',
    async (t) => {
      const { tenant, manager } = await rankedTenant(app)
      const res = await call(app, 'createPublishableKey', manager.cred, {
        body: { name: 'k', allowedOrigins: [ORIGIN], defaultRoles: ['high'] },
      })
      t.equal(res.status, 403, res.raw)
      t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION')
      const mixed = await call(app, 'createPublishableKey', manager.cred, {
        body: { name: 'k', allowedOrigins: [ORIGIN], defaultRoles: ['low', 'high'] },
      })
      t.equal(mixed.code, 'ROLE_HIERARCHY_VIOLATION', 'one role too high refuses the whole list')
      t.same(await storedKeys(app, tenant), [], 'no key was stored')
    },
  )

  t.test(
    'createPublishableKey: 201 for default roles below or at the caller’s level (section 6: level <= rank)',
    async (t) => {
      const { manager } = await rankedTenant(app)
      const low = await call(app, 'createPublishableKey', manager.cred, {
        body: { name: 'low', allowedOrigins: [ORIGIN], defaultRoles: ['low', 'user'] },
      })
      t.equal(low.status, 201, low.raw)
      t.same(low.data.defaultRoles, ['low', 'user'])
      const peer = await call(app, 'createPublishableKey', manager.cred, {
        body: { name: 'peer', allowedOrigins: [ORIGIN], defaultRoles: ['peer'] },
      })
      t.equal(peer.status, 201, 'a role of the caller’s own level may be assigned, so given')
    },
  )

  t.test(
    'updatePublishableKey: 403 ROLE_HIERARCHY_VIOLATION adding a role above the caller’s level; the key unchanged',
    async (t) => {
      const { tenant, manager } = await rankedTenant(app)
      const created = await call(app, 'createPublishableKey', manager.cred, {
        body: { name: 'k', allowedOrigins: [ORIGIN], defaultRoles: ['low'] },
      })
      t.equal(created.status, 201, created.raw)
      const res = await call(app, 'updatePublishableKey', manager.cred, {
        params: { id: created.data.id },
        body: { name: 'renamed', defaultRoles: ['low', 'high'] },
      })
      t.equal(res.status, 403, res.raw)
      t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION')
      const after = await call(app, 'getPublishableKey', manager.cred, { params: { id: created.data.id } })
      t.same(after.data, created.data, 'neither the roles nor the name changed')
      t.same(await storedKeys(app, tenant), [{ id: created.data.id, default_roles: ['low'] }])
      const ok = await call(app, 'updatePublishableKey', manager.cred, {
        params: { id: created.data.id },
        body: { defaultRoles: ['peer'] },
      })
      t.equal(ok.status, 200, 'a role at the caller’s level may replace them')
      t.same(ok.data.defaultRoles, ['peer'])
    },
  )

  t.test(
    'updatePublishableKey: a Client Key may not give a role with a permission outside its scopes',
    async (t) => {
      const { tenant, manager } = await rankedTenant(app)
      const created = await call(app, 'createPublishableKey', manager.cred, {
        body: { name: 'k', allowedOrigins: [ORIGIN] },
      })
      const key = await keyCred(app, tenant, ['client-keys:create', 'client-keys:update'])
      const made = await call(app, 'createPublishableKey', key, {
        body: { name: 'k', allowedOrigins: [ORIGIN], defaultRoles: ['low'] },
      })
      t.equal(made.status, 403, 'at creation')
      // Why FORBIDDEN: containment is section 20's check, which runs before the rank (section 6).
      t.equal(made.code, 'FORBIDDEN')
      const res = await call(app, 'updatePublishableKey', key, {
        params: { id: created.data.id },
        body: { defaultRoles: ['low'] },
      })
      t.equal(res.status, 403, 'at a PATCH')
      t.equal(res.code, 'FORBIDDEN')
      const scoped = await keyCred(app, tenant, ['client-keys:update', 'auth:logs'])
      const ok = await call(app, 'updatePublishableKey', scoped, {
        params: { id: created.data.id },
        body: { defaultRoles: ['high'] },
      })
      t.equal(ok.status, 200, 'a key has no rank: within its scopes, any level')
    },
  )

  t.test('createPublishableKey: createdBy is the creating user, null for a Client Key', async (t) => {
    const { tenant, manager } = await rankedTenant(app)
    const byUser = await call(app, 'createPublishableKey', manager.cred, {
      body: { name: 'by user', allowedOrigins: [ORIGIN] },
    })
    t.equal(byUser.status, 201)
    t.equal(byUser.data.createdBy, manager.id)
    const got = await call(app, 'getPublishableKey', manager.cred, { params: { id: byUser.data.id } })
    t.equal(got.data.createdBy, manager.id, 'as stored')
    const key = await keyCred(app, tenant, ['client-keys:create', 'client-keys:update'])
    const byKey = await call(app, 'createPublishableKey', key, {
      body: { name: 'by key', allowedOrigins: [ORIGIN] },
    })
    t.equal(byKey.status, 201)
    t.equal(byKey.data.createdBy, null)
    const list = await call(app, 'listPublishableKeys', manager.cred)
    t.same(
      list.data.items.map((k) => [k.name, k.createdBy]),
      [
        ['by key', null],
        ['by user', manager.id],
      ],
    )
    const renamed = await call(app, 'updatePublishableKey', key, {
      params: { id: byUser.data.id },
      body: { name: 'renamed' },
    })
    t.equal(renamed.data.createdBy, manager.id, 'an edit by someone else keeps the creator')
  })

  t.test(
    'signup: a replayed solution is 400 INVALID_CHALLENGE and costs the key’s signupsPerHour nothing',
    async (t) => {
      const { key } = await tenantWithKey(app, { signupsPerHour: 2 })
      const altcha = await solvedChallenge(app, key.key)
      const first = await call(app, 'signup', pk(key.key, ORIGIN, freshIp()), {
        body: { email: email(), password: PASSWORD, altcha },
      })
      t.equal(first.status, 201, first.raw)
      const replays: (string | undefined)[] = []
      for (let i = 0; i < 4; i++) {
        const res = await call(app, 'signup', pk(key.key, ORIGIN, freshIp()), {
          body: { email: email(), password: PASSWORD, altcha },
        })
        replays.push(`${res.status} ${res.code}`)
      }
      t.same(replays, Array(4).fill('400 INVALID_CHALLENGE'), 'each replay refused as used, never 429')
      const fresh = await call(app, 'signup', pk(key.key, ORIGIN, freshIp()), {
        body: { email: email(), password: PASSWORD, altcha: await solvedChallenge(app, key.key) },
      })
      t.equal(fresh.status, 201, 'the second of two sign-ups an hour still goes through')
      const over = await call(app, 'signup', pk(key.key, ORIGIN, freshIp()), {
        body: { email: email(), password: PASSWORD, altcha: await solvedChallenge(app, key.key) },
      })
      t.equal(over.status, 429, 'the key’s budget still counts real sign-ups')
    },
  )

  t.test('signup: a replay from one address still spends that address’s budget', async (t) => {
    const { key } = await tenantWithKey(app, { signupsPerHour: 1000 })
    const ip = freshIp()
    const altcha = await solvedChallenge(app, key.key)
    const statuses: number[] = []
    for (let i = 0; i < 10; i++) {
      const res = await call(app, 'signup', pk(key.key, ORIGIN, ip), {
        body: { email: email(), password: PASSWORD, altcha },
      })
      statuses.push(res.status)
    }
    t.same(statuses, [201, ...Array(9).fill(400)])
    const over = await call(app, 'signup', pk(key.key, ORIGIN, ip), {
      body: { email: email(), password: PASSWORD, altcha: await solvedChallenge(app, key.key) },
    })
    t.equal(over.status, 429, 'the address is charged before the solution is checked as used')
  })
})
