import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call, type As, type BodyOf } from '../helpers/call.js'
import type { TapTest } from '../helpers/db.js'
import { createTenant, createUser, platformTenant, userWithToken, type UserFx } from '../helpers/fixtures.js'

// Contract section 26, "one's own identifiers change only through /me, with proof": PATCH /users/{userId}
// that changes the email, username or status of the credential's own user is 403 FORBIDDEN for every kind of
// credential and whatever its permissions; the hierarchy rule's exemption of acts on oneself does not apply.

const app = await buildTestApp(t)

const patchUser = (as: As, userId: string, body: BodyOf<'updateUser'>) =>
  call(app, 'updateUser', as, { params: { userId }, body })

const IDENTIFIER_CHANGES: BodyOf<'updateUser'>[] = [
  { email: 'someone-else@example.test' },
  { username: 'new_name' },
  { status: 'SUSPENDED' },
  { status: 'INACTIVE' },
]

/** The user's stored identifiers and status. */
function identifiersOf(user: UserFx) {
  return app.ctx.dbs
    .forTenant(user.tenant.id)
    .selectFrom('users')
    .select(['email', 'username', 'status', 'email_verified', 'security_version'])
    .where('id', '=', user.id)
    .executeTakeFirstOrThrow()
}

/** Asserts each identifier change on `target` is 403 FORBIDDEN with `as`, and that nothing was written. */
async function refusesEach(t: TapTest, as: As, target: UserFx, who: string) {
  const before = await identifiersOf(target)
  for (const body of IDENTIFIER_CHANGES) {
    const r = await patchUser(as, target.id, body)
    t.equal(r.status, 403, `${who}: ${JSON.stringify(body)}`)
    t.equal(r.code, 'FORBIDDEN')
  }
  t.same(await identifiersOf(target), before, `${who}: nothing changed`)
}

t.test('updateUser: 403 FORBIDDEN for the own email, username or status with the own token', async (t) => {
  const tenant = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'], username: 'boss' })
  await refusesEach(t, admin.cred, admin, 'own token')

  const same = await patchUser(admin.cred, admin.id, {
    email: admin.email,
    username: 'boss',
    status: 'ACTIVE',
  })
  t.equal(same.status, 200, 'the values as stored change nothing (the console sends the status on save)')
  const verified = await patchUser(admin.cred, admin.id, { emailVerified: true })
  t.equal(verified.status, 200, 'emailVerified is not an identifier')
  t.equal(verified.data.emailVerified, true)

  const member = await createUser(app, tenant, { roles: ['user'] })
  for (const body of IDENTIFIER_CHANGES) {
    const r = await patchUser(admin.cred, member.id, body)
    t.equal(r.status, 200, `another user: ${JSON.stringify(body)}`)
  }
  const after = await identifiersOf(member)
  t.equal(after.email, 'someone-else@example.test', 'the other user’s email changed')
  t.equal(after.status, 'INACTIVE')
})

t.test('updateUser: 403 FORBIDDEN for a Client Key its user made, on that user; 200 on others', async (t) => {
  const tenant = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const scopes = (await call(app, 'listClientKeyScopes', admin.cred)).data.items.map(
    (i: { scope: string }) => i.scope,
  )
  const created = await call(app, 'createClientKey', admin.cred, { body: { name: 'own', scopes } })
  t.equal(created.status, 201)
  const key: As = { key: created.data.key }
  await refusesEach(t, key, admin, 'a key of the user')

  const member = await createUser(app, tenant, { roles: ['user'] })
  const other = await patchUser(key, member.id, { email: 'member-renamed@example.test' })
  t.equal(other.status, 200, 'on another user')
  t.equal(other.data.email, 'member-renamed@example.test')
})

t.test('updateUser: 403 FORBIDDEN for a platform admin with admin:* on itself', async (t) => {
  const platform = await platformTenant(app)
  const admin = await userWithToken(app, platform, { roles: ['admin'] })
  await refusesEach(t, admin.cred, admin, 'admin:* token')

  const created = await call(app, 'createClientKey', admin.cred, {
    body: { name: 'platform-own', scopes: ['admin:*'] },
  })
  t.equal(created.status, 201)
  await refusesEach(t, { key: created.data.key }, admin, 'its admin:* key')

  const other = await createUser(app, platform, { roles: ['admin'] })
  const r = await patchUser(admin.cred, other.id, { username: `renamed_${other.id.slice(0, 8)}` })
  t.equal(r.status, 200, 'another platform admin')
})
