import t from 'tap'
import { createManualClock } from '../../src/lib/clock.js'
import { buildTestApp } from '../helpers/app.js'
import { call, type As, type BodyOf } from '../helpers/call.js'
import {
  createKey,
  createTenant,
  createUser,
  userWithToken,
  type TenantFx,
  type UserFx,
} from '../helpers/fixtures.js'
import type { TapTest } from '../helpers/db.js'

// Contract section 26, "a key's value makes its holder a user behind it": every user who received a value
// of a key (its creator, each rotator; a key made or rotated by a key passes on that key's set) is one the
// key cannot raise; rotating, and adding scopes, need a recent sign-in.

// Why a manual clock: the 600-second boundary of a recent sign-in is tested to the second.
const app = await buildTestApp(t, {}, { clock: createManualClock() })
const STALE = 601

const nowS = () => Math.floor(app.ctx.clock.now() / 1000)
const createKeyAs = (as: As, body: BodyOf<'createClientKey'>) => call(app, 'createClientKey', as, { body })
const rotate = (as: As, id: string, gracePeriodSeconds = 0) =>
  call(app, 'rotateClientKey', as, { params: { id }, body: { gracePeriodSeconds } })
const patchKey = (as: As, id: string, body: BodyOf<'updateClientKey'>) =>
  call(app, 'updateClientKey', as, { params: { id }, body })
const disableOtpOf = (as: As, userId: string) =>
  call(app, 'updateUser', as, { params: { userId }, body: { otpEnabled: false } })
const resetPassword = (as: As, userId: string) =>
  call(app, 'resetUserPassword', as, { params: { userId }, body: { password: 'Brand-new-pass-42' } })
const unlock = (as: As, userId: string) => call(app, 'unlockUser', as, { params: { userId }, body: {} })

/** Every scope the credential may give a key of its own tenant. */
async function allScopes(as: As): Promise<string[]> {
  const r = await call(app, 'listClientKeyScopes', as)
  return (r.data.items as { scope: string }[]).map((i) => i.scope)
}

/** The key's stored row: who is behind it, its scopes, name and value's prefix. */
function keyRow(id: string) {
  return app.ctx.dbs.main
    .selectFrom('client_keys')
    .select(['behind_user_ids', 'scopes', 'name', 'prefix'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow()
}

/** The stored state an attacker would change: the password hash and the second-factor flag. */
function secretsOf(user: UserFx) {
  return app.ctx.dbs
    .forTenant(user.tenant.id)
    .selectFrom('users')
    .select(['password_hash', 'otp_enabled'])
    .where('id', '=', user.id)
    .executeTakeFirstOrThrow()
}

/** An admin of the tenant, signed in now, whose logins need a second factor. */
async function admin(tenant: TenantFx) {
  const user = await userWithToken(app, tenant, { roles: ['admin'] })
  await app.ctx.dbs
    .forTenant(tenant.id)
    .updateTable('users')
    .set({ otp_enabled: true })
    .where('id', '=', user.id)
    .execute()
  return user
}

/** Asserts that the key refuses, 403 FORBIDDEN, to set the user's password or remove its second factor. */
async function refusesToRaise(t: TapTest, key: As, user: UserFx, who: string) {
  const before = await secretsOf(user)
  t.equal((await resetPassword(key, user.id)).code, 'FORBIDDEN', `${who}: password`)
  t.equal((await disableOtpOf(key, user.id)).code, 'FORBIDDEN', `${who}: second factor`)
  t.same(await secretsOf(user), before, `${who}: nothing changed`)
}

t.test(
  'rotateClientKey: the rotator is behind the key; its new value cannot raise the rotator or the creator',
  async (t) => {
    const tenant = await createTenant(app)
    const a = await admin(tenant)
    const b = await admin(tenant)
    const member = await createUser(app, tenant, { roles: ['user'] })
    const created = await createKeyAs(b.cred, { name: 'by-b', scopes: await allScopes(b.cred) })
    t.equal(created.status, 201)
    t.same((await keyRow(created.data.id)).behind_user_ids, [b.id], 'the creator is behind it')

    const rotated = await rotate(a.cred, created.data.id)
    t.equal(rotated.status, 200, 'another admin rotates it')
    t.same((await keyRow(created.data.id)).behind_user_ids, [b.id, a.id], 'both are behind it now')
    const key: As = { key: rotated.data.key }

    await refusesToRaise(t, key, a, 'the rotator')
    t.equal((await unlock(key, a.id)).code, 'FORBIDDEN', 'the rotator: unlock')
    await refusesToRaise(t, key, b, 'the creator')
    t.equal((await resetPassword(key, member.id)).status, 200, 'a user nobody rotated it for: 200')

    const again = await rotate(a.cred, created.data.id)
    t.equal(again.status, 200)
    t.same(
      (await keyRow(created.data.id)).behind_user_ids,
      [b.id, a.id],
      'a second rotation adds no one twice',
    )
  },
)

t.test(
  'rotateClientKey: the value still in its grace period sees the new set at once (the cache is dropped)',
  async (t) => {
    const tenant = await createTenant(app)
    const a = await admin(tenant)
    const b = await admin(tenant)
    const created = await createKeyAs(b.cred, { name: 'by-b', scopes: await allScopes(b.cred) })
    const old: As = { key: created.data.key }
    t.equal((await call(app, 'listTenantClientKeys', old)).status, 200, 'the old value is cached')

    const rotated = await rotate(a.cred, created.data.id, 600)
    t.equal(rotated.status, 200)
    await refusesToRaise(t, old, a, 'the old value, on the rotator')
    await refusesToRaise(t, { key: rotated.data.key }, a, 'the new value, on the rotator')
  },
)

t.test(
  'rotateClientKey: 401 REAUTHENTICATION_REQUIRED for a stale or auth_time-less token; a key needs none',
  async (t) => {
    const tenant = await createTenant(app)
    const b = await admin(tenant)
    const scopes = await allScopes(b.cred)
    const created = await createKeyAs(b.cred, { name: 'by-b', scopes })
    const before = await keyRow(created.data.id)

    const stale = await userWithToken(app, tenant, { roles: ['admin'], authTime: nowS() - STALE })
    const r1 = await rotate(stale.cred, created.data.id)
    t.equal(r1.status, 401, 'a sign-in 601 s ago')
    t.equal(r1.code, 'REAUTHENTICATION_REQUIRED')
    const none = await userWithToken(app, tenant, { roles: ['admin'], authTime: null })
    const r2 = await rotate(none.cred, created.data.id)
    t.equal(r2.status, 401, 'a token without auth_time')
    t.equal(r2.code, 'REAUTHENTICATION_REQUIRED')
    t.same(await keyRow(created.data.id), before, 'neither rotated it nor joined the set')

    const byKey = await rotate({ key: (await createKey(app, tenant, scopes)).value }, created.data.id)
    t.equal(byKey.status, 200, 'a Client Key rotates with no sign-in')
    t.same((await keyRow(created.data.id)).behind_user_ids, [b.id], 'an operator key adds nobody')
  },
)

t.test(
  'updateClientKey: adding a scope needs a recent sign-in; narrowing, renaming and allowlists do not',
  async (t) => {
    const tenant = await createTenant(app)
    const b = await admin(tenant)
    const created = await createKeyAs(b.cred, { name: 'k', scopes: ['users:read', 'roles:*'] })
    const id = created.data.id
    const stale = await userWithToken(app, tenant, { roles: ['admin'], authTime: nowS() - STALE })
    const before = await keyRow(id)

    const added = await patchKey(stale.cred, id, { scopes: ['users:read', 'roles:*', 'users:update'] })
    t.equal(added.status, 401, 'a scope the key lacks, with a stale token')
    t.equal(added.code, 'REAUTHENTICATION_REQUIRED')
    const none = await userWithToken(app, tenant, { roles: ['admin'], authTime: null })
    const both = await patchKey(none.cred, id, { name: 'renamed', scopes: ['users:update'] })
    t.equal(both.code, 'REAUTHENTICATION_REQUIRED', 'a token without auth_time, with a rename')
    t.same(await keyRow(id), before, 'nothing changed')

    const narrowed = await patchKey(stale.cred, id, { scopes: ['roles:read'] })
    t.equal(narrowed.status, 200, 'narrowing, a wildcard to one of its permissions included')
    t.same(narrowed.data.scopes, ['roles:read'])
    const renamed = await patchKey(stale.cred, id, {
      name: 'renamed',
      ipAllowlist: ['10.0.0.0/8'],
      expiresAt: new Date(app.ctx.clock.now() + 86_400_000).toISOString(),
    })
    t.equal(renamed.status, 200, 'name, allowlist and expiry')
    t.equal(renamed.data.name, 'renamed')
    const same = await patchKey(stale.cred, id, { scopes: ['roles:read'] })
    t.equal(same.status, 200, 'the same scopes again')

    const fresh = await patchKey(b.cred, id, { scopes: ['roles:read', 'users:update'] })
    t.equal(fresh.status, 200, 'a fresh sign-in adds it')
    const key: As = {
      key: (await createKey(app, tenant, ['client-keys:update', 'users:*', 'roles:*'])).value,
    }
    const byKey = await patchKey(key, id, { scopes: ['roles:read', 'users:update', 'users:read'] })
    t.equal(byKey.status, 200, 'a Client Key adds a scope with no sign-in')
    t.same((await keyRow(id)).scopes, ['roles:read', 'users:update', 'users:read'])
  },
)

t.test(
  'createClientKey: a key made by a key inherits its set; rotateClientKey by a key adds the rotating set',
  async (t) => {
    const tenant = await createTenant(app)
    const a = await admin(tenant)
    const b = await admin(tenant)
    const c = await admin(tenant)
    const scopes = await allScopes(b.cred)

    const parent = await createKeyAs(b.cred, { name: 'parent', scopes })
    const rotatedParent = await rotate(a.cred, parent.data.id)
    const parentKey: As = { key: rotatedParent.data.key }
    t.same((await keyRow(parent.data.id)).behind_user_ids, [b.id, a.id])

    const child = await createKeyAs(parentKey, { name: 'child', scopes })
    t.equal(child.status, 201)
    t.same((await keyRow(child.data.id)).behind_user_ids, [b.id, a.id], 'the child has the parent’s set')
    await refusesToRaise(t, { key: child.data.key }, a, 'the child, on the parent’s rotator')
    await refusesToRaise(t, { key: child.data.key }, b, 'the child, on the parent’s creator')

    const ofC = await createKeyAs(c.cred, { name: 'by-c', scopes })
    const byKey = await rotate(parentKey, ofC.data.id)
    t.equal(byKey.status, 200, 'the parent key rotates C’s key')
    t.same((await keyRow(ofC.data.id)).behind_user_ids, [c.id, b.id, a.id], 'C’s key gains the parent’s set')
    const rotatedOfC: As = { key: byKey.data.key }
    await refusesToRaise(t, rotatedOfC, a, 'C’s rotated key, on A')
    await refusesToRaise(t, rotatedOfC, c, 'C’s rotated key, on its creator')

    const other = await admin(tenant)
    t.equal((await resetPassword(rotatedOfC, other.id)).status, 200, 'an admin behind none of them: 200')
  },
)

t.test('updateUser: a key cannot change the email, username or status of a user behind it', async (t) => {
  const tenant = await createTenant(app)
  const a = await admin(tenant)
  const b = await admin(tenant)
  const created = await createKeyAs(b.cred, { name: 'by-b', scopes: await allScopes(b.cred) })
  const key: As = { key: (await rotate(a.cred, created.data.id)).data.key }
  const bodies: BodyOf<'updateUser'>[] = [
    { email: 'taken-over@example.test' },
    { username: 'taken_over' },
    { status: 'SUSPENDED' },
  ]
  for (const body of bodies) {
    const r = await call(app, 'updateUser', key, { params: { userId: a.id }, body })
    t.equal(r.code, 'FORBIDDEN', `on the rotator: ${Object.keys(body).join()}`)
  }
  const row = await app.ctx.dbs
    .forTenant(tenant.id)
    .selectFrom('users')
    .select(['email', 'username', 'status'])
    .where('id', '=', a.id)
    .executeTakeFirstOrThrow()
  t.same(row, { email: a.email, username: null, status: 'ACTIVE' }, 'nothing changed')
  const onOther = await call(app, 'updateUser', key, {
    params: { userId: (await createUser(app, tenant, { roles: ['user'] })).id },
    body: { username: 'renamed_member' },
  })
  t.equal(onOther.status, 200, 'on a user behind none of it: 200')
})
