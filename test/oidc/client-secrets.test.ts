import t from 'tap'
import { call } from '../helpers/call.js'
import { createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { listeningApp, registerClient } from '../helpers/oidc.js'

// rotateOAuthClientSecret at the provider (contract section 23): a client authenticates with the secret it was
// given; after a rotation the former one works for its grace only, compared against its stored hash.

const { app, base } = await listeningApp(t, { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' })
const tenant = await createTenant(app)
const admin = { token: await tokenFor(app, await createUser(app, tenant, { roles: ['admin'] })) }
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`

/** The status of an introspection the client authenticates for with this secret (any token will do). */
async function authenticates(clientId: string, secret: string, method: 'basic' | 'post' = 'basic') {
  const fields: Record<string, string> = { token: 'not-a-token' }
  if (method === 'post') Object.assign(fields, { client_id: clientId, client_secret: secret })
  const res = await fetch(`${base}/t/${tenant.code}/token/introspection`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(method === 'basic' ? { authorization: basic(clientId, secret) } : {}),
    },
    body: new URLSearchParams(fields).toString(),
  })
  return res.status
}

t.test('rotateOAuthClientSecret: the former secret works for its grace, then never', async (t) => {
  const c = await registerClient(app, tenant, {
    logoUri: 'https://cdn.acme.test/logo.png',
    clientUri: 'https://acme.test',
    backchannelLogoutUri: 'http://127.0.0.1:9/logout',
  })
  const first = c.clientSecret ?? ''
  t.equal(await authenticates(c.clientId, first), 200, 'the secret it was given')
  t.equal(await authenticates(c.clientId, 'x'.repeat(43)), 401, 'any other')
  const rotated = await call(app, 'rotateOAuthClientSecret', admin, {
    params: { id: c.id },
    body: { gracePeriodSeconds: 2 },
  })
  const second = rotated.data.clientSecret ?? ''
  t.equal(await authenticates(c.clientId, second), 200, 'the new secret')
  t.equal(await authenticates(c.clientId, first), 200, 'the former one, within its grace')
  await new Promise((r) => setTimeout(r, 2100))
  t.equal(await authenticates(c.clientId, first), 401, 'the former one, once its grace is over')
  const again = await call(app, 'rotateOAuthClientSecret', admin, { params: { id: c.id }, body: {} })
  t.equal(await authenticates(c.clientId, second), 401, 'no grace: the former secret stops at once')
  t.equal(await authenticates(c.clientId, again.data.clientSecret ?? ''), 200)
})

t.test(
  'createOAuthClient: a client_secret_post client authenticates in the form, with its own secret',
  async (t) => {
    const c = await registerClient(app, tenant, { tokenEndpointAuthMethod: 'client_secret_post' })
    t.equal(await authenticates(c.clientId, c.clientSecret ?? '', 'post'), 200)
    t.equal(await authenticates(c.clientId, 'y'.repeat(43), 'post'), 401, 'any other secret')
  },
)

t.test(
  'updateOAuthClient: a back-channel URI on an allowed host may be http; a dynamic client never first-party',
  async (t) => {
    const c = await registerClient(app, tenant)
    const ok = await call(app, 'updateOAuthClient', admin, {
      params: { id: c.id },
      body: {
        backchannelLogoutUri: 'http://127.0.0.1:9/bc',
        postLogoutRedirectUris: ['http://127.0.0.1:9/bye'],
      },
    })
    t.equal(ok.status, 200)
    const cleared = await call(app, 'updateOAuthClient', admin, {
      params: { id: c.id },
      body: { backchannelLogoutUri: null, logoUri: 'https://cdn.acme.test/l.png', firstParty: true },
    })
    t.equal(cleared.status, 200)
    t.match(cleared.data, { backchannelLogoutUri: null, firstParty: true })
    await app.ctx.dbs
      .forTenant(tenant.id)
      .updateTable('oauth_clients')
      .set({ dynamic: true })
      .where('id', '=', c.id)
      .execute()
    const dyn = await call(app, 'updateOAuthClient', admin, {
      params: { id: c.id },
      body: { firstParty: true },
    })
    t.equal(dyn.status, 400)
    t.equal(dyn.code, 'VALIDATION_ERROR')
  },
)
