import t from 'tap'
import { createKey, createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { auditRows } from '../helpers/fixtures.js'
import { discover, follow, interact, listeningApp, registerClient, startFlow } from '../helpers/oidc.js'

// The interaction's operations (contract section 23, "Sign-in and consent"): what the sign-in page calls
// with the browser's cookies and the fresh access token of the console's own sign-in.

const { app, base } = await listeningApp(t)
const tenant = await createTenant(app)
const other = await createTenant(app)
const user = await createUser(app, tenant, { roles: ['user'] })
const conf = await registerClient(app, tenant, {
  name: 'Acme web',
  logoUri: 'https://cdn.acme.test/logo.png',
})
const config = await discover(base, tenant, conf.clientId, conf.clientSecret)
const now = () => Math.floor(Date.now() / 1000)

t.test('getInteractionDetails: what the page shows, for this browser only', async (t) => {
  const flow = await startFlow(base, config, { login_hint: 'ada@example.test', scope: 'openid email' })
  const res = await interact(flow, 'details')
  t.equal(res.status, 200)
  t.match(res.json.data, {
    uid: flow.uid,
    prompt: 'login',
    client: {
      clientId: conf.clientId,
      name: 'Acme web',
      logoUri: 'https://cdn.acme.test/logo.png',
      firstParty: false,
    },
    scopes: ['openid', 'email'],
    loginHint: 'ada@example.test',
  })
  const stranger = await fetch(`${flow.interactionUrl}/details`)
  t.equal(stranger.status, 404, 'another browser (no cookies)')
  t.equal(((await stranger.json()) as { code: string }).code, 'INTERACTION_NOT_FOUND')
  const wrongUid = await flow.browser.fetch(`${base}/t/${tenant.code}/interaction/${'x'.repeat(21)}/details`)
  t.equal(wrongUid.status, 404, 'an unknown uid')
  const malformed = await flow.browser.fetch(`${base}/t/${tenant.code}/interaction/bad%20uid/details`)
  t.equal(malformed.status, 400)
})

t.test('getInteractionPage: the console’s page, with no framing; 404 for an unknown tenant', async (t) => {
  const flow = await startFlow(base, config)
  const page = await flow.browser.fetch(flow.interactionUrl)
  t.equal(page.status, 200)
  t.match(page.headers.get('content-security-policy'), /frame-ancestors 'none'/)
  const none = await fetch(`${base}/t/no-such-tenant/interaction/${flow.uid}`)
  t.equal(none.status, 404)
})

t.test('loginInteraction: a fresh sign-in of this tenant’s user, and nothing else', async (t) => {
  const flow = await startFlow(base, config)
  const stale = await interact(flow, 'login', await tokenFor(app, user, 900, { authTime: now() - 601 }))
  t.equal(stale.status, 401)
  t.equal(stale.json.code, 'REAUTHENTICATION_REQUIRED')
  const foreign = await interact(
    flow,
    'login',
    await tokenFor(app, await createUser(app, other, { roles: ['user'] })),
  )
  t.equal(foreign.status, 403, 'another tenant’s token')
  const key = await createKey(app, tenant, ['users:read'])
  const byKey = await flow.browser.fetch(`${flow.interactionUrl}/login`, {
    method: 'POST',
    headers: { 'x-client-key': key.value },
  })
  t.equal(byKey.status, 403, 'a Client Key')
  const none = await interact(flow, 'login')
  t.equal(none.status, 401)
  const stranger = await fetch(`${flow.interactionUrl}/login`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await tokenFor(app, user)}` },
  })
  t.equal(stranger.status, 404, 'without the browser’s cookies')
  const malformed = await interact(
    { ...flow, interactionUrl: `${base}/t/${tenant.code}/interaction/bad%20uid` },
    'login',
    await tokenFor(app, user),
  )
  t.equal(malformed.status, 400)
  const maxAge = await startFlow(base, config, { max_age: '60' })
  const old = await interact(maxAge, 'login', await tokenFor(app, user, 900, { authTime: now() - 120 }))
  t.equal(old.status, 401, 'older than max_age')
  const ok = await interact(flow, 'login', await tokenFor(app, user))
  t.equal(ok.status, 200)
  t.match(ok.json.data?.redirectTo, `${base}/t/${tenant.code}/auth/${flow.uid}`)
})

t.test('consentInteraction: Allow grants, Deny sends access_denied; both are audited', async (t) => {
  const token = await tokenFor(app, user)
  const flow = await startFlow(base, config)
  const early = await interact(flow, 'consent', token, { approve: true })
  t.equal(early.status, 400, 'sign in first')
  const login = await interact(flow, 'login', token)
  const consentPage = await follow(flow, login.json.data?.redirectTo ?? '')
  const step = { ...flow, interactionUrl: consentPage.href }
  const details = await interact(step, 'details')
  t.equal((details.json.data as { prompt?: string }).prompt, 'consent')
  const intruder = await interact(
    step,
    'consent',
    await tokenFor(app, await createUser(app, tenant, { roles: ['user'] })),
    {
      approve: true,
    },
  )
  t.equal(intruder.status, 403, 'another user of the tenant')
  const none = await interact(step, 'consent', undefined, { approve: true })
  t.equal(none.status, 401)
  const stranger = await fetch(`${consentPage.href}/consent`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ approve: true }),
  })
  t.equal(stranger.status, 404)
  const deny = await interact(step, 'consent', token, { approve: false })
  t.equal(deny.status, 200)
  const back = await follow(flow, deny.json.data?.redirectTo ?? '')
  t.equal(back.searchParams.get('error'), 'access_denied')
  t.equal(back.searchParams.get('state'), flow.state)
  const rows = await auditRows(app, tenant.id, 'OAUTH_CONSENT')
  t.match(rows.at(-1), { success: false, user_id: user.id, metadata: { clientId: conf.clientId } })
})

t.test('abortInteraction: the client receives access_denied', async (t) => {
  const flow = await startFlow(base, config)
  const res = await interact(flow, 'abort')
  t.equal(res.status, 200)
  const back = await follow(flow, res.json.data?.redirectTo ?? '')
  t.equal(back.searchParams.get('error'), 'access_denied')
  const again = await fetch(`${flow.interactionUrl}/abort`, { method: 'POST' })
  t.equal(again.status, 404, 'without the browser’s cookies')
  const malformed = await interact(
    { ...flow, interactionUrl: `${base}/t/${tenant.code}/interaction/bad%20uid` },
    'abort',
  )
  t.equal(malformed.status, 400)
})

t.test('a first-party client is not asked for consent', async (t) => {
  const own = await registerClient(app, tenant, { firstParty: true })
  const ownConfig = await discover(base, tenant, own.clientId, own.clientSecret)
  const flow = await startFlow(base, ownConfig, { scope: 'openid offline_access' })
  const login = await interact(flow, 'login', await tokenFor(app, user))
  const back = await follow(flow, login.json.data?.redirectTo ?? '')
  t.ok(back.searchParams.get('code'), 'straight back with a code')
})
