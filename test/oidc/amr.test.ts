import t from 'tap'
import { loginTokens } from '../helpers/call.js'
import { createUser, userWithToken, type UserFx } from '../helpers/fixtures.js'
import {
  discover,
  exchangeCode,
  follow,
  interact,
  listeningApp,
  registerClient,
  startFlow,
} from '../helpers/oidc.js'
import { enroll, passkeyLogin, passkeyTenant } from '../passkeys/support.js'

// The ID token's `amr` says how the person signed in (contract section 23, RFC 8176): the method of the
// Tessera session handed to the interaction.

const { app, base } = await listeningApp(t)
const tenant = await passkeyTenant(app, { rateLimits: { requestsPerMinute: 10_000, loginPerMinute: null } })
const reg = await registerClient(app, tenant, { firstParty: true })
const config = await discover(base, tenant, reg.clientId, reg.clientSecret)

/** The claims of the ID token a sign-in with this access token gets. */
async function idTokenAfter(accessToken: string, user: UserFx) {
  const flow = await startFlow(base, config, { scope: 'openid' })
  const login = await interact(flow, 'login', accessToken)
  t.equal(login.status, 200)
  const callback = await follow(flow, login.json.data?.redirectTo ?? '')
  const tokens = await exchangeCode(config, flow, callback)
  const claims = tokens.claims()
  t.equal(claims?.sub, user.id)
  return claims
}

t.test('loginInteraction: a password sign-in gives amr pwd', async (t) => {
  const user = await createUser(app, tenant, { roles: ['user'] })
  const { accessToken } = await loginTokens(app, user)
  t.same((await idTokenAfter(accessToken, user))?.amr, ['pwd'])
})

t.test('loginInteraction: a passkey sign-in gives amr hwk user mfa', async (t) => {
  const holder = await userWithToken(app, tenant, { roles: ['user'] })
  const { auth } = await enroll(app, holder.cred)
  const { res } = await passkeyLogin(app, tenant, auth)
  t.equal(res.status, 200)
  const claims = await idTokenAfter(res.data.accessToken, holder)
  t.same(claims?.amr, ['hwk', 'user', 'mfa'])
  t.ok(claims?.auth_time, 'auth_time of that sign-in')
})
