import t from 'tap'
import { call } from '../helpers/call.js'
import { auditRows, createTenant, createUser, tokenFor, userWithToken } from '../helpers/fixtures.js'
import { federationKit } from '../helpers/federation.js'
import { listeningApp } from '../helpers/oidc.js'
import { startUpstream } from '../helpers/upstream.js'

// A person's own links (contract section 24): the link token and `intent=link` through a real upstream on
// loopback, listing and unlinking under /me and for administrators, and the last way into an account kept.

const { app, base } = await listeningApp(t, { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' })
const tenant = await createTenant(app)
const other = await createTenant(app)
const upstream = await startUpstream(t, { redirectUris: [`${base}/t/${tenant.code}/federation/callback`] })
const admin = await userWithToken(app, tenant, { roles: ['admin'] })
const RETURN_TO = `${base}/console/account`
const kit = federationKit({ app, base, tenant, admin, returnTo: RETURN_TO }, upstream)
const provider = await kit.addProvider({ name: 'Company', allowSignup: true })

/** A link token of this user (a fresh sign-in), and the flow that spends it as `person`. */
async function link(cred: { token?: string }, person: { sub: string; email?: string }) {
  const made = await call(app, 'createMyIdentityLinkToken', cred, {})
  if (made.status !== 200) throw new Error(made.raw)
  const ended = await kit.federate(upstream, provider.id, {
    person,
    query: { intent: 'link', link_token: made.data.linkToken },
  })
  return { ended, linkToken: made.data.linkToken }
}

t.test(
  'createMyIdentityLinkToken, listMyIdentities, federationCallback: intent=link links the person to the token’s user',
  async (t) => {
    const ana = await userWithToken(app, tenant, { roles: ['user'] })
    t.same((await call(app, 'listMyIdentities', ana.cred, {})).data, { items: [] })
    const stale = await tokenFor(app, ana, 900, { authTime: Math.floor(Date.now() / 1000) - 3600 })
    const refused = await call(app, 'createMyIdentityLinkToken', { token: stale }, {})
    t.equal(refused.code, 'REAUTHENTICATION_REQUIRED', 'a stale sign-in gets no link token')
    const { ended, linkToken } = await link(ana.cred, { sub: 'ana-at-company', email: 'ana@company.test' })
    t.equal(ended.status, 302)
    t.equal(ended.fragment?.toString(), '', 'back at return_to with no login code and no error')
    const listed = await call(app, 'listMyIdentities', ana.cred, {})
    t.match(listed.data.items, [
      {
        providerId: provider.id,
        providerName: 'Company',
        subject: 'ana-at-company',
        email: 'ana@company.test',
      },
    ])
    const linked = (await auditRows(app, tenant.id, 'IDENTITY_LINKED')).filter((r) => r.user_id === ana.id)
    t.match(linked, [
      { success: true, actor_type: 'user', actor_id: ana.id, metadata: { providerId: provider.id } },
    ])
    const signIn = await kit.federate(upstream, provider.id)
    const login = await kit.login(signIn.fragment?.get('login_code') ?? null, signIn.verifier)
    t.equal(login.data.user.id, ana.id, 'the linked identity signs Ana in')
    const again = await kit.federate(upstream, provider.id, {
      query: { intent: 'link', link_token: linkToken },
    })
    t.equal(again.fragment?.get('error'), 'invalid_link_token', 'a link token works once')
    const none = await kit.federate(upstream, provider.id, { query: { intent: 'link' } })
    t.equal(none.fragment?.get('error'), 'invalid_link_token', 'intent=link without a token')
    const bob = await userWithToken(app, tenant, { roles: ['user'] })
    const taken = await link(bob.cred, { sub: 'ana-at-company' })
    t.equal(taken.ended.fragment?.get('error'), 'already_linked', 'another user’s identity')
    t.same((await call(app, 'listMyIdentities', bob.cred, {})).data, { items: [] }, 'nothing linked to Bob')
    const foreign = await call(app, 'createMyIdentityLinkToken', { key: 'tk_' + 'x'.repeat(43) }, {})
    t.equal(foreign.status, 401, 'a JWT only')
  },
)

t.test('deleteMyIdentity: unlinks, but never the last way to sign in', async (t) => {
  const cyd = await userWithToken(app, tenant, { roles: ['user'] })
  await link(cyd.cred, { sub: 'cyd-at-company' })
  const [identity] = (await call(app, 'listMyIdentities', cyd.cred, {})).data.items
  const stale = await tokenFor(app, cyd, 900, { authTime: Math.floor(Date.now() / 1000) - 3600 })
  const refused = await call(
    app,
    'deleteMyIdentity',
    { token: stale },
    { params: { id: identity?.id ?? '' } },
  )
  t.equal(refused.code, 'REAUTHENTICATION_REQUIRED')
  const unknown = await call(app, 'deleteMyIdentity', cyd.cred, {
    params: { id: '00000000-0000-4000-8000-000000000000' },
  })
  t.equal(unknown.code, 'NOT_FOUND')
  const gone = await call(app, 'deleteMyIdentity', cyd.cred, { params: { id: identity?.id ?? '' } })
  t.same(gone.data, { id: identity?.id, deleted: true }, 'a user with a password may unlink')
  t.same((await call(app, 'listMyIdentities', cyd.cred, {})).data, { items: [] })
  const rows = (await auditRows(app, tenant.id, 'IDENTITY_UNLINKED')).filter((r) => r.user_id === cyd.id)
  t.match(rows, [
    { success: false, error_message: 'NOT_FOUND' },
    { success: true, actor_id: cyd.id, metadata: { identityId: identity?.id } },
  ])
  // A user the provider signed up has no password: its only identity stays.
  const first = await kit.federate(upstream, provider.id, {
    person: { sub: 'dee-signup', email: 'dee@company.test', email_verified: true },
  })
  const dee = await kit.login(first.fragment?.get('login_code') ?? null, first.verifier)
  const deeCred = { token: dee.data.accessToken }
  const [only] = (await call(app, 'listMyIdentities', deeCred, {})).data.items
  const last = await call(app, 'deleteMyIdentity', deeCred, { params: { id: only?.id ?? '' } })
  t.equal(last.status, 409)
  t.equal(last.code, 'LAST_SIGN_IN_METHOD')
  t.equal((await call(app, 'listMyIdentities', deeCred, {})).data.items.length, 1, 'still linked')
})

t.test(
  'listUserIdentities, deleteUserIdentity: administrators, within their tenant and the hierarchy rule',
  async (t) => {
    const eve = await userWithToken(app, tenant, { roles: ['user'] })
    await link(eve.cred, { sub: 'eve-at-company' })
    const listed = await call(app, 'listUserIdentities', admin.cred, { params: { userId: eve.id } })
    t.equal(listed.data.items.length, 1)
    const id = listed.data.items[0]?.id ?? ''
    const plain = await call(app, 'listUserIdentities', eve.cred, { params: { userId: eve.id } })
    t.equal(plain.code, 'FORBIDDEN', 'users:read needed')
    const stranger = await userWithToken(app, other, { roles: ['admin'] })
    const foreign = await call(app, 'listUserIdentities', stranger.cred, { params: { userId: eve.id } })
    t.equal(foreign.code, 'USER_NOT_FOUND', 'another tenant’s user')
    const foreignDelete = await call(app, 'deleteUserIdentity', stranger.cred, {
      params: { userId: eve.id, id },
    })
    t.equal(foreignDelete.code, 'USER_NOT_FOUND')
    const own = await call(app, 'deleteUserIdentity', admin.cred, { params: { userId: admin.id, id } })
    t.equal(own.code, 'FORBIDDEN', 'never the credential’s own user')
    const boss = await createUser(app, tenant, { roles: ['admin'] })
    const junior = await userWithToken(app, tenant, { roles: ['user'], permissions: ['users:update'] })
    const upward = await call(app, 'deleteUserIdentity', junior.cred, { params: { userId: boss.id, id } })
    t.equal(upward.code, 'ROLE_HIERARCHY_VIOLATION')
    const fay = await createUser(app, tenant, { roles: ['user'] })
    const wrongUser = await call(app, 'deleteUserIdentity', admin.cred, { params: { userId: fay.id, id } })
    t.equal(wrongUser.code, 'NOT_FOUND', 'the identity of another user')
    const first = await kit.federate(upstream, provider.id, {
      person: { sub: 'gus-signup', email: 'gus@company.test', email_verified: true },
    })
    const gus = (await kit.login(first.fragment?.get('login_code') ?? null, first.verifier)).data.user
    const [only] = (await call(app, 'listUserIdentities', admin.cred, { params: { userId: gus.id } })).data
      .items
    const last = await call(app, 'deleteUserIdentity', admin.cred, {
      params: { userId: gus.id, id: only?.id ?? '' },
    })
    t.equal(last.code, 'LAST_SIGN_IN_METHOD', 'an administrator cannot take the last way in either')
    const done = await call(app, 'deleteUserIdentity', admin.cred, { params: { userId: eve.id, id } })
    t.same(done.data, { id, deleted: true })
    const row = (await auditRows(app, tenant.id, 'IDENTITY_UNLINKED')).find(
      (r) => r.success && r.user_id === eve.id,
    )
    t.match(row, { actor_id: admin.id, metadata: { identityId: id } })
  },
)
