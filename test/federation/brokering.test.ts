import t from 'tap'
import { createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { federationKit } from '../helpers/federation.js'
import {
  client,
  discover,
  exchangeCode,
  follow,
  interact,
  listeningApp,
  registerClient,
  startFlow,
} from '../helpers/oidc.js'
import { startUpstream } from '../helpers/upstream.js'

// Tessera as a broker (contract sections 23 and 24): an application signs in with Tessera by the standard
// (openid-client), and its user signs in at the tenant's upstream provider from the interaction page. The
// application's ID token names the Tessera user and says `amr: ["fed"]`.

const { app, base } = await listeningApp(t, { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' })
const tenant = await createTenant(app)
const upstream = await startUpstream(t, { redirectUris: [`${base}/t/${tenant.code}/federation/callback`] })
const admin = { token: await tokenFor(app, await createUser(app, tenant, { roles: ['admin'] })) }
const reg = await registerClient(app, tenant, { firstParty: true })
const config = await discover(base, tenant, reg.clientId, reg.clientSecret)

t.test(
  'loginInteraction after loginFederated: an application’s user signs in through the upstream',
  async (t) => {
    const flow = await startFlow(base, config, { scope: 'openid email' })
    const returnTo = `${base}/t/${tenant.code}/interaction/${flow.uid}`
    const { addProvider, federate, login } = federationKit({ app, base, tenant, admin, returnTo }, upstream)
    const provider = await addProvider({ allowSignup: true })
    const back = await federate(upstream, provider.id, {
      person: { sub: 'broker-1', email: 'brokered@acme.test', email_verified: true },
    })
    t.equal(back.status, 302, 'the upstream sends the browser back to the interaction page')
    const signedIn = await login(back.fragment?.get('login_code') ?? null, back.verifier)
    t.equal(signedIn.status, 200, signedIn.raw)
    const step = await interact(flow, 'login', signedIn.data.accessToken)
    t.equal(step.status, 200, JSON.stringify(step.json))
    const callback = await follow(flow, step.json.data?.redirectTo ?? '')
    const tokens = await exchangeCode(config, flow, callback)
    const claims = tokens.claims()
    t.equal(claims?.sub, signedIn.data.user.id, 'the ID token names the Tessera user')
    t.same(claims?.amr, ['fed'], 'amr: fed')
    t.equal(claims?.email, 'brokered@acme.test')
    t.ok(claims?.auth_time, 'auth_time of the federated sign-in')
    const info = await client.fetchUserInfo(config, tokens.access_token, String(claims?.sub))
    t.equal(info.email, 'brokered@acme.test', 'userinfo for the application')
  },
)
