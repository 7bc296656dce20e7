import t from 'tap'
import { createTenant, createUser } from '../helpers/fixtures.js'
import { client, discover, listeningApp, registerClient, signIn, startFlow } from '../helpers/oidc.js'

t.test(
  'exchangeOidcToken: the code flow with a confidential client, as openid-client drives it',
  async (t) => {
    const { app, base } = await listeningApp(t)
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant, { roles: ['user'] })
    const registered = await registerClient(app, tenant)
    const config = await discover(base, tenant, registered.clientId, registered.clientSecret)
    t.equal(config.serverMetadata().issuer, `${base}/t/${tenant.code}`)
    const flow = await startFlow(base, config, { scope: 'openid email profile offline_access' })
    const callback = await signIn(app, flow, user)
    t.equal(callback.searchParams.get('iss'), `${base}/t/${tenant.code}`, 'iss in the authorization response')
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
    })
    const claims = tokens.claims()
    t.equal(claims?.sub, user.id)
    t.equal(claims?.email, user.email)
    t.ok(claims?.auth_time, 'auth_time')
    t.ok(tokens.refresh_token, 'a refresh token with offline_access')
    const info = await client.fetchUserInfo(config, tokens.access_token, user.id)
    t.equal(info.email, user.email)
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token ?? '')
    t.ok(refreshed.access_token)
    t.not(refreshed.refresh_token, tokens.refresh_token, 'rotated')
  },
)
