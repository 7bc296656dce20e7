import t, { type Test } from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call, unchecked } from '../helpers/call.js'
import { byUser, bySelf, matchOne } from '../helpers/audit.js'
import { auditRows, createTenant, platformKey, UNKNOWN_ID, userWithToken } from '../helpers/fixtures.js'
import { SoftAuthenticator } from './soft-authenticator.js'
import { enroll, ORIGIN, passkeyTenant, RP_ID } from './support.js'

// Registering and managing passkeys (contract section 21): /me/passkeys and /users/{userId}/passkeys, the
// refusals a browser cannot produce (forged with the software authenticator), and auth_config.webauthn.

const app = await buildTestApp(t)
/** Deletes a user row behind the API: its access token stays valid, as after DELETE /users/{userId}. */
const dropUser = (tenantId: string, id: string) =>
  app.ctx.dbs
    .forTenant(tenantId)
    .deleteFrom('users')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute()
const OLD = () => Math.floor(Date.now() / 1000) - 3600

async function member(extra: Record<string, unknown> = {}) {
  const tenant = await passkeyTenant(app, extra)
  return { tenant, user: await userWithToken(app, tenant, { roles: ['user'] }) }
}

t.test('getPasskeyRegistrationOptions: POST /me/passkeys/options', async (t) => {
  const { tenant, user } = await member()
  const first = await enroll(app, user.cred)
  const res = await call(app, 'getPasskeyRegistrationOptions', user.cred)
  t.equal(res.status, 200)
  t.match(res.data, {
    rp: { id: RP_ID, name: 'Acme' },
    user: { name: user.email },
    attestation: 'none',
    authenticatorSelection: {
      residentKey: 'required',
      userVerification: 'required',
      requireResidentKey: true,
    },
    timeout: 300_000,
  })
  t.same(
    res.data.excludeCredentials.map((c) => c.id),
    [first.auth.id],
    'the user’s passkeys are excluded',
  )
  t.not(res.data.challenge, (await call(app, 'getPasskeyRegistrationOptions', user.cred)).data.challenge)

  t.test('401 REAUTHENTICATION_REQUIRED for a token of an old sign-in', async (t) => {
    const stale = await userWithToken(app, tenant, { authTime: OLD() })
    const r = await call(app, 'getPasskeyRegistrationOptions', stale.cred)
    t.equal(r.status, 401)
    t.equal(r.code, 'REAUTHENTICATION_REQUIRED')
  })
  t.test('409 PASSKEYS_DISABLED without auth_config.webauthn', async (t) => {
    const plain = await userWithToken(app, await createTenant(app))
    const r = await call(app, 'getPasskeyRegistrationOptions', plain.cred)
    t.equal(r.status, 409)
    t.equal(r.code, 'PASSKEYS_DISABLED')
  })
  t.test('404 USER_NOT_FOUND for a deleted user’s token', async (t) => {
    const gone = await userWithToken(app, tenant)
    await dropUser(gone.tenant.id, gone.id)
    const r = await call(app, 'getPasskeyRegistrationOptions', gone.cred)
    t.equal(r.status, 404)
    t.equal(r.code, 'USER_NOT_FOUND')
  })
  t.test('400 VALIDATION_ERROR for a body that is not empty', async (t) => {
    const r = await call(app, 'getPasskeyRegistrationOptions', user.cred, { body: unchecked({ x: 1 }) })
    t.equal(r.status, 400)
  })
})

t.test('registerMyPasskey: POST /me/passkeys', async (t) => {
  const { tenant, user } = await member()
  const auth = new SoftAuthenticator(ORIGIN, RP_ID)
  const options = await call(app, 'getPasskeyRegistrationOptions', user.cred)
  const res = await call(app, 'registerMyPasskey', user.cred, {
    body: { name: 'Work laptop', response: auth.register(options.data) },
  })
  t.equal(res.status, 201)
  t.match(res.data, { name: 'Work laptop', lastUsedAt: null, backedUp: true, transports: ['internal'] })
  t.notOk('publicKey' in res.data || 'credentialId' in res.data, 'no key material in the answer')
  matchOne(t, await auditRows(app, tenant.id, 'PASSKEY_ADDED'), {
    success: true,
    ...bySelf(user.id),
    metadata: { passkeyId: res.data.id },
  })
  const unnamed = new SoftAuthenticator(ORIGIN, RP_ID)
  const o2 = await call(app, 'getPasskeyRegistrationOptions', user.cred)
  const r2 = await call(app, 'registerMyPasskey', user.cred, {
    body: { response: unnamed.register(o2.data) },
  })
  t.equal(r2.data.name, 'Passkey', 'the default name')

  const refused = async (t: Test, forge: Parameters<SoftAuthenticator['register']>[1], why: string) => {
    const o = await call(app, 'getPasskeyRegistrationOptions', user.cred)
    const r = await call(app, 'registerMyPasskey', user.cred, {
      body: { response: new SoftAuthenticator(ORIGIN, RP_ID).register(o.data, forge) },
    })
    t.equal(r.status, 400, why)
    t.equal(r.code, 'INVALID_PASSKEY', why)
  }
  t.test('400 INVALID_PASSKEY: another origin', (t) => refused(t, { origin: 'https://evil.test' }, 'origin'))
  t.test('400 INVALID_PASSKEY: another rpId', (t) => refused(t, { rpId: 'evil.test' }, 'rpId'))
  t.test('400 INVALID_PASSKEY: no user-verification flag', (t) => refused(t, { noUv: true }, 'UV'))
  t.test('400 INVALID_PASSKEY: a challenge the service never gave', (t) =>
    refused(t, { challenge: 'bm90LWEtY2hhbGxlbmdl' }, 'challenge'),
  )
  t.test('400 INVALID_PASSKEY: a get assertion instead of a create', (t) =>
    refused(t, { type: 'webauthn.get' }, 'type'),
  )
  t.test('400 INVALID_PASSKEY: a used challenge, and another user’s challenge', async (t) => {
    const a = new SoftAuthenticator(ORIGIN, RP_ID)
    const o = await call(app, 'getPasskeyRegistrationOptions', user.cred)
    const body = { response: a.register(o.data) }
    t.equal((await call(app, 'registerMyPasskey', user.cred, { body })).status, 201)
    const again = await call(app, 'registerMyPasskey', user.cred, { body })
    t.equal(again.code, 'INVALID_PASSKEY', 'the challenge is single-use')
    const other = await userWithToken(app, tenant)
    const o3 = await call(app, 'getPasskeyRegistrationOptions', user.cred)
    const stolen = await call(app, 'registerMyPasskey', other.cred, {
      body: { response: new SoftAuthenticator(ORIGIN, RP_ID).register(o3.data) },
    })
    t.equal(stolen.code, 'INVALID_PASSKEY', 'a challenge is bound to its user')
    const mine = await call(app, 'registerMyPasskey', user.cred, {
      body: { response: new SoftAuthenticator(ORIGIN, RP_ID).register(o3.data) },
    })
    t.equal(mine.status, 201, 'and stays usable by its own user')
    const fails = (await auditRows(app, tenant.id, 'PASSKEY_ADDED')).filter((r) => !r.success)
    t.ok(fails.length >= 2, 'failures write PASSKEY_ADDED rows')
  })
  t.test('400 INVALID_PASSKEY: a credential already registered in the tenant', async (t) => {
    const o = await call(app, 'getPasskeyRegistrationOptions', user.cred)
    const dup = await call(app, 'registerMyPasskey', user.cred, { body: { response: auth.register(o.data) } })
    t.equal(dup.code, 'INVALID_PASSKEY')
  })
  t.test('401 REAUTHENTICATION_REQUIRED; 409 PASSKEYS_DISABLED; 404 USER_NOT_FOUND', async (t) => {
    const o = await call(app, 'getPasskeyRegistrationOptions', user.cred)
    const body = { response: new SoftAuthenticator(ORIGIN, RP_ID).register(o.data) }
    const stale = await userWithToken(app, tenant, { authTime: OLD() })
    t.equal((await call(app, 'registerMyPasskey', stale.cred, { body })).code, 'REAUTHENTICATION_REQUIRED')
    const plain = await userWithToken(app, await createTenant(app))
    t.equal((await call(app, 'registerMyPasskey', plain.cred, { body })).code, 'PASSKEYS_DISABLED')
    const gone = await userWithToken(app, tenant)
    await dropUser(gone.tenant.id, gone.id)
    const r = await call(app, 'registerMyPasskey', gone.cred, { body })
    t.equal(r.status, 404)
    t.equal(r.code, 'USER_NOT_FOUND')
  })
})

t.test('listMyPasskeys: GET /me/passkeys', async (t) => {
  const { tenant, user } = await member()
  const a = await enroll(app, user.cred)
  const b = await enroll(app, user.cred)
  const other = await userWithToken(app, tenant)
  await enroll(app, other.cred)
  const res = await call(app, 'listMyPasskeys', user.cred, { query: { limit: 10 } })
  t.equal(res.status, 200)
  t.same(
    res.data.items.map((p) => p.id).sort(),
    [a.passkey.id, b.passkey.id].sort(),
    'the caller’s own passkeys only',
  )
  t.match(res.data, { total: 2, limit: 10, offset: 0 })
  t.equal((await call(app, 'listMyPasskeys', user.cred, { query: { limit: 101 } })).status, 400)
  const plain = await userWithToken(app, await createTenant(app))
  t.equal((await call(app, 'listMyPasskeys', plain.cred)).code, 'PASSKEYS_DISABLED')
  await dropUser(tenant.id, other.id)
  t.equal((await call(app, 'listMyPasskeys', other.cred)).code, 'USER_NOT_FOUND')
})

t.test('renameMyPasskey: PATCH /me/passkeys/{id}', async (t) => {
  const { tenant, user } = await member()
  const { passkey } = await enroll(app, user.cred)
  const res = await call(app, 'renameMyPasskey', user.cred, {
    params: { id: passkey.id },
    body: { name: 'Phone' },
  })
  t.equal(res.status, 200)
  t.equal(res.data.name, 'Phone')
  const other = await userWithToken(app, tenant)
  const foreign = await call(app, 'renameMyPasskey', other.cred, {
    params: { id: passkey.id },
    body: { name: 'x' },
  })
  t.equal(foreign.status, 404)
  t.equal(foreign.code, 'PASSKEY_NOT_FOUND', 'another user’s passkey is unknown')
  t.equal(
    (await call(app, 'renameMyPasskey', user.cred, { params: { id: UNKNOWN_ID }, body: { name: 'x' } })).code,
    'PASSKEY_NOT_FOUND',
  )
  t.equal(
    (await call(app, 'renameMyPasskey', user.cred, { params: { id: passkey.id }, body: { name: '' } }))
      .status,
    400,
  )
  const plain = await userWithToken(app, await createTenant(app))
  const off = await call(app, 'renameMyPasskey', plain.cred, {
    params: { id: passkey.id },
    body: { name: 'x' },
  })
  t.equal(off.code, 'PASSKEYS_DISABLED')
})

t.test('deleteMyPasskey: DELETE /me/passkeys/{id}', async (t) => {
  const { tenant, user } = await member()
  const { passkey } = await enroll(app, user.cred)
  const other = await userWithToken(app, tenant)
  const foreign = await call(app, 'deleteMyPasskey', other.cred, { params: { id: passkey.id } })
  t.equal(foreign.code, 'PASSKEY_NOT_FOUND')
  const stale = await call(
    app,
    'deleteMyPasskey',
    { token: (await userWithToken(app, tenant, { authTime: OLD() })).token },
    {
      params: { id: passkey.id },
    },
  )
  t.equal(stale.code, 'REAUTHENTICATION_REQUIRED')
  const res = await call(app, 'deleteMyPasskey', user.cred, { params: { id: passkey.id } })
  t.equal(res.status, 200)
  t.same(res.data, { id: passkey.id, deleted: true })
  t.equal((await call(app, 'listMyPasskeys', user.cred)).data.total, 0)
  const rows = (await auditRows(app, tenant.id, 'PASSKEY_REMOVED')).filter((r) => r.success)
  matchOne(t, rows, { ...bySelf(user.id), metadata: { passkeyId: passkey.id } })
  t.equal((await call(app, 'deleteMyPasskey', user.cred, { params: { id: passkey.id } })).status, 404)
  const plain = await userWithToken(app, await createTenant(app))
  t.equal(
    (await call(app, 'deleteMyPasskey', plain.cred, { params: { id: passkey.id } })).code,
    'PASSKEYS_DISABLED',
  )
})

t.test('listUserPasskeys: GET /users/{userId}/passkeys', async (t) => {
  const { tenant, user } = await member()
  const { passkey } = await enroll(app, user.cred)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const res = await call(app, 'listUserPasskeys', admin.cred, { params: { userId: user.id } })
  t.equal(res.status, 200)
  t.same(
    res.data.items.map((p) => p.id),
    [passkey.id],
  )
  t.equal(
    (await call(app, 'listUserPasskeys', admin.cred, { params: { userId: UNKNOWN_ID } })).code,
    'USER_NOT_FOUND',
  )
  t.equal((await call(app, 'listUserPasskeys', user.cred, { params: { userId: user.id } })).status, 403)
  const plainTenant = await createTenant(app)
  const plainAdmin = await userWithToken(app, plainTenant, { roles: ['admin'] })
  const off = await call(app, 'listUserPasskeys', plainAdmin.cred, { params: { userId: plainAdmin.id } })
  t.equal(off.code, 'PASSKEYS_DISABLED')
})

t.test('deleteUserPasskey: DELETE /users/{userId}/passkeys/{id}', async (t) => {
  const { tenant, user } = await member()
  const { passkey } = await enroll(app, user.cred)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const peer = await userWithToken(app, tenant, { roles: ['admin'] })
  const mine = await enroll(app, admin.cred)

  const own = await call(app, 'deleteUserPasskey', admin.cred, {
    params: { userId: admin.id, id: mine.passkey.id },
  })
  t.equal(own.status, 403)
  t.equal(own.code, 'FORBIDDEN', 'never the caller’s own user: /me with a recent sign-in')
  const up = await call(app, 'deleteUserPasskey', peer.cred, {
    params: { userId: admin.id, id: mine.passkey.id },
  })
  t.equal(up.code, 'ROLE_HIERARCHY_VIOLATION', 'an admin may not act on an admin')
  const unknownUser = await call(app, 'deleteUserPasskey', admin.cred, {
    params: { userId: UNKNOWN_ID, id: passkey.id },
  })
  t.equal(unknownUser.code, 'USER_NOT_FOUND')
  const wrongOwner = await call(app, 'deleteUserPasskey', admin.cred, {
    params: { userId: peer.id, id: passkey.id },
  })
  t.equal(wrongOwner.code, 'ROLE_HIERARCHY_VIOLATION', 'the rule is checked before the passkey')
  const other = await userWithToken(app, tenant)
  const notHis = await call(app, 'deleteUserPasskey', admin.cred, {
    params: { userId: other.id, id: passkey.id },
  })
  t.equal(notHis.status, 404)
  t.equal(notHis.code, 'PASSKEY_NOT_FOUND', 'a passkey of another user')

  const res = await call(app, 'deleteUserPasskey', admin.cred, {
    params: { userId: user.id, id: passkey.id },
  })
  t.equal(res.status, 200)
  t.same(res.data, { id: passkey.id, deleted: true })
  const rows = (await auditRows(app, tenant.id, 'PASSKEY_REMOVED')).filter((r) => r.success)
  matchOne(t, rows, { ...byUser(admin.id), user_id: user.id, metadata: { passkeyId: passkey.id } })
  const plainTenant = await createTenant(app)
  const plainAdmin = await userWithToken(app, plainTenant, { roles: ['admin'] })
  const off = await call(app, 'deleteUserPasskey', plainAdmin.cred, {
    params: { userId: UNKNOWN_ID, id: UNKNOWN_ID },
  })
  t.equal(off.code, 'PASSKEYS_DISABLED')
})

t.test(
  'updateTenantConfig: auth_config.webauthn is checked whole, and null turns passkeys off',
  async (t) => {
    const tenant = await createTenant(app)
    const patch = (webauthn: unknown) =>
      call(app, 'updateTenantConfig', platformKey, {
        params: { id: tenant.id },
        body: unchecked({ webauthn }),
      })
    const ok = await patch({ rpId: 'acme.test', origins: ['https://acme.test', 'https://app.acme.test'] })
    t.equal(ok.status, 200)
    t.match(ok.data.webauthn, { rpId: 'acme.test' })
    const local = await patch({ rpId: 'localhost', origins: ['http://localhost:5173'] })
    t.equal(local.status, 200, 'localhost over http, for development')
    for (const [why, cfg] of [
      ['a path', { rpId: 'acme.test', origins: ['https://acme.test/login'] }],
      ['a trailing slash', { rpId: 'acme.test', origins: ['https://acme.test/'] }],
      ['an origin outside rpId', { rpId: 'acme.test', origins: ['https://evil.test'] }],
      ['a look-alike suffix', { rpId: 'acme.test', origins: ['https://notacme.test'] }],
      ['http off localhost', { rpId: 'acme.test', origins: ['http://acme.test'] }],
      ['a public suffix', { rpId: 'co.uk', origins: ['https://shop.co.uk'] }],
      ['an address', { rpId: '127.0.0.1', origins: ['https://127.0.0.1'] }],
      ['localhost for another host', { rpId: 'localhost', origins: ['https://acme.test'] }],
    ] as const) {
      const r = await patch(cfg)
      t.equal(r.status, 400, why)
      t.equal(r.code, 'VALIDATION_ERROR', why)
    }
    const originsOnly = await patch({ origins: ['https://elsewhere.test'] })
    t.equal(originsOnly.status, 400, 'origins alone must still fit the stored rpId')
    const off = await patch(null)
    t.equal(off.status, 200)
    t.equal(off.data.webauthn, null)
    const created = await call(app, 'createTenant', platformKey, {
      body: unchecked({
        code: `pk-${Date.now()}`,
        name: 'Pk',
        auth_config: { webauthn: { rpId: 'com', origins: ['https://com'] } },
      }),
    })
    t.equal(created.status, 400, 'createTenant checks it too')
  },
)
