import t from 'tap'
import { createManualClock } from '../../src/lib/clock.js'
import { buildTestApp } from '../helpers/app.js'
import { call, type As, type BodyOf } from '../helpers/call.js'
import {
  createKey,
  createTenant,
  createUser,
  platformKey,
  platformTenant,
  userWithToken,
  type TenantFx,
  type UserFx,
} from '../helpers/fixtures.js'

// Contract section 22, "a credential never raises its own user" and "recent sign-in": the account-takeover
// chain of the second review (a stolen admin token mints a Client Key, the key removes the admin's second
// factor and sets the admin's password), each step refused; and `createdBy` on Client Keys.

// Why a manual clock: the 600-second boundary is tested to the second.
const app = await buildTestApp(t, {}, { clock: createManualClock() })
const STALE = 601

const nowS = () => Math.floor(app.ctx.clock.now() / 1000)
const createKeyAs = (as: As, body: BodyOf<'createClientKey'>) => call(app, 'createClientKey', as, { body })
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

/** The stored state an attacker would change: the password hash and the second-factor flag. */
function secretsOf(user: UserFx) {
  return app.ctx.dbs
    .forTenant(user.tenant.id)
    .selectFrom('users')
    .select(['password_hash', 'otp_enabled'])
    .where('id', '=', user.id)
    .executeTakeFirstOrThrow()
}

/** An admin whose logins need a second factor, and its token signed in `authAge` seconds ago. */
async function adminWithFactor(tenant: TenantFx, authAge = 0) {
  const admin = await userWithToken(app, tenant, { roles: ['admin'], authTime: nowS() - authAge })
  await app.ctx.dbs
    .forTenant(tenant.id)
    .updateTable('users')
    .set({ otp_enabled: true })
    .where('id', '=', admin.id)
    .execute()
  return admin
}

t.test(
  'createClientKey: the account-takeover chain of a stolen admin token is refused step by step',
  async (t) => {
    const tenant = await createTenant(app)
    const stolen = await adminWithFactor(tenant, STALE)
    const scopes = await allScopes(stolen.cred)
    const before = await secretsOf(stolen)

    const minted = await createKeyAs(stolen.cred, { name: 'attacker', scopes })
    t.equal(minted.status, 401, 'a token of a sign-in 601 s ago mints no key')
    t.equal(minted.code, 'REAUTHENTICATION_REQUIRED')
    const none = await userWithToken(app, tenant, { roles: ['admin'], authTime: null })
    const noAuthTime = await createKeyAs(none.cred, { name: 'attacker', scopes })
    t.equal(noAuthTime.code, 'REAUTHENTICATION_REQUIRED', 'nor a token without auth_time')
    const count = await app.ctx.dbs.main
      .selectFrom('client_keys')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('tenant_id', '=', tenant.id)
      .executeTakeFirstOrThrow()
    t.equal(Number(count.n), 0, 'no key was stored')

    // Suppose the attacker got a fresh token anyway: the key it mints still cannot raise the admin.
    const admin = await adminWithFactor(tenant)
    const created = await createKeyAs(admin.cred, { name: 'made-by-admin', scopes })
    t.equal(created.status, 201, 'a fresh sign-in mints a key')
    t.equal(created.data.createdBy, admin.id, 'createdBy is the admin')
    const key: As = { key: created.data.key }
    const adminBefore = await secretsOf(admin)

    const otp = await disableOtpOf(key, admin.id)
    t.equal(otp.status, 403, "the key cannot remove its creator's second factor")
    t.equal(otp.code, 'FORBIDDEN')
    const pw = await resetPassword(key, admin.id)
    t.equal(pw.status, 403, "the key cannot set its creator's password")
    t.equal(pw.code, 'FORBIDDEN')
    const un = await unlock(key, admin.id)
    t.equal(un.status, 403, "the key cannot clear its creator's lockout counters")
    t.equal(un.code, 'FORBIDDEN')
    t.same(await secretsOf(admin), adminBefore, 'password hash and otpEnabled unchanged')

    t.equal((await disableOtpOf(admin.cred, admin.id)).status, 403, 'nor its own access token: otpEnabled')
    t.equal((await resetPassword(admin.cred, admin.id)).status, 403, 'nor its own access token: password')
    t.same(await secretsOf(stolen), before, 'the stolen admin is untouched')
  },
)

t.test(
  'updateUser: 403 FORBIDDEN for otpEnabled false by a key its target created, 200 by others',
  async (t) => {
    const tenant = await createTenant(app)
    const a = await adminWithFactor(tenant)
    const b = await userWithToken(app, tenant, { roles: ['admin'] })
    const scopes = await allScopes(a.cred)
    const keyOfB: As = { key: (await createKeyAs(b.cred, { name: 'b', scopes })).data.key }
    const keyOfA: As = { key: (await createKeyAs(a.cred, { name: 'a', scopes })).data.key }

    // A key made by A's key stands for A too (createdBy null): A's authority is not laundered through it.
    const grandchild = await createKeyAs(keyOfA, { name: 'child', scopes })
    t.equal(grandchild.status, 201, 'a key needs no sign-in to make a key')
    t.equal(grandchild.data.createdBy, null, 'createdBy is null for a key made by a key')
    t.equal(
      (await disableOtpOf({ key: grandchild.data.key }, a.id)).code,
      'FORBIDDEN',
      'the child key neither',
    )

    const byB = await disableOtpOf(keyOfB, a.id)
    t.equal(byB.status, 200, "another admin's key resets the admin's second factor")
    t.equal(byB.data.otpEnabled, false)
    t.equal((await secretsOf(a)).otp_enabled, false)
  },
)

t.test(
  'resetUserPassword: 403 FORBIDDEN by a key its target created, 200 by other admins and the platform',
  async (t) => {
    const tenant = await createTenant(app)
    const a = await adminWithFactor(tenant)
    const b = await userWithToken(app, tenant, { roles: ['admin'] })
    const scopes = await allScopes(a.cred)
    const keyOfA: As = { key: (await createKeyAs(a.cred, { name: 'a', scopes })).data.key }
    const keyOfB: As = { key: (await createKeyAs(b.cred, { name: 'b', scopes })).data.key }
    const operatorKey: As = { key: (await createKey(app, tenant, scopes)).value }
    const before = await secretsOf(a)

    t.equal((await resetPassword(keyOfA, a.id)).code, 'FORBIDDEN', 'its own key')
    t.same(await secretsOf(a), before)
    const byB = await resetPassword(keyOfB, a.id)
    t.equal(byB.status, 200, "another admin's key")
    t.equal(byB.data.changed, true)
    t.not((await secretsOf(a)).password_hash, before.password_hash, 'the hash changed')
    t.equal((await resetPassword(operatorKey, a.id)).status, 200, 'a key the operator made (no creator)')
    const byPlatform = await createKeyAs(platformKey, { name: 'p', scopes, tenantId: tenant.id })
    t.equal(byPlatform.data.createdBy, null, 'a key the platform key made')
    t.equal((await resetPassword({ key: byPlatform.data.key }, a.id)).status, 200, 'can reset the admin too')
  },
)

t.test(
  'unlockUser: 403 FORBIDDEN on the user the credential stands for; 200 for another admin’s key',
  async (t) => {
    const tenant = await createTenant(app)
    const a = await userWithToken(app, tenant, { roles: ['admin'] })
    const b = await userWithToken(app, tenant, { roles: ['admin'] })
    const scopes = await allScopes(a.cred)
    const keyOfB: As = { key: (await createKeyAs(b.cred, { name: 'b', scopes })).data.key }
    t.equal((await unlock(a.cred, a.id)).code, 'FORBIDDEN', 'its own access token')
    t.equal((await unlock(keyOfB, a.id)).status, 200, "another admin's key")
  },
)

t.test(
  'resetUserPassword: 403 FORBIDDEN for the platform admin’s own admin:* key on the platform admin',
  async (t) => {
    const platform = await platformTenant(app)
    const admin = await userWithToken(app, platform, { roles: ['admin'] })
    const created = await createKeyAs(admin.cred, { name: 'platform-admin', scopes: ['admin:*'] })
    t.equal(created.status, 201)
    t.equal(created.data.createdBy, admin.id)
    const key: As = { key: created.data.key }
    t.equal((await resetPassword(key, admin.id)).code, 'FORBIDDEN', 'admin:* is no exemption')
    t.equal((await disableOtpOf(key, admin.id)).code, 'FORBIDDEN')
    const other = await createUser(app, platform, { roles: ['admin'] })
    t.equal((await resetPassword(key, other.id)).status, 200, 'another platform admin it may reset')
  },
)

t.test(
  'listClientKeys: createdBy names the creating user, null for a key made by a key or the operator',
  async (t) => {
    const tenant = await createTenant(app)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const byUser = await createKeyAs(admin.cred, {
      name: 'by-user',
      scopes: ['users:read', 'client-keys:create'],
    })
    const byKey = await createKeyAs({ key: byUser.data.key }, { name: 'by-key', scopes: ['users:read'] })
    const byOperator = await createKey(app, tenant, ['users:read'])
    const expected = new Map([
      [byUser.data.id as string, admin.id],
      [byKey.data.id as string, null],
      [byOperator.id, null],
    ])

    const all = await call(app, 'listClientKeys', platformKey, { query: { tenantId: tenant.id } })
    t.equal(all.status, 200)
    t.same(
      new Map(all.data.items.map((k: { id: string; createdBy: string | null }) => [k.id, k.createdBy])),
      expected,
    )
    const own = await call(app, 'listTenantClientKeys', admin.cred)
    t.same(
      new Map(own.data.items.map((k: { id: string; createdBy: string | null }) => [k.id, k.createdBy])),
      expected,
    )
    const one = await call(app, 'getClientKey', admin.cred, { params: { id: byUser.data.id } })
    t.equal(one.data.createdBy, admin.id, 'getClientKey too')
  },
)

t.test(
  'createClientKey: a Client Key is never asked for a recent sign-in; a user token of 600 s is still recent',
  async (t) => {
    const tenant = await createTenant(app)
    const key: As = { key: (await createKey(app, tenant, ['client-keys:create', 'users:read'])).value }
    t.equal((await createKeyAs(key, { name: 'k', scopes: ['users:read'] })).status, 201)
    const edge = await userWithToken(app, tenant, { roles: ['admin'], authTime: nowS() - 600 })
    t.equal(
      (await createKeyAs(edge.cred, { name: 'edge', scopes: ['users:read'] })).status,
      201,
      '600 s: recent',
    )
    const member = await userWithToken(app, tenant, { roles: ['user'], authTime: nowS() - STALE })
    const denied = await createKeyAs(member.cred, { name: 'm', scopes: [] })
    t.equal(denied.code, 'FORBIDDEN', 'a missing permission is told first: signing in again would not help')
  },
)
