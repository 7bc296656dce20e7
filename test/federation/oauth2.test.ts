import t from 'tap'
import { call } from '../helpers/call.js'
import { createTenant, createUser, tokenFor, userRow } from '../helpers/fixtures.js'
import { listeningApp } from '../helpers/oidc.js'
import { federationKit } from '../helpers/federation.js'
import { startOAuth2Upstream } from '../helpers/oauth2-upstream.js'
import { startUpstream } from '../helpers/upstream.js'

// A plain OAuth 2.0 provider (contract section 24, kind `oauth2`), as GitHub is one: no discovery, no ID
// token, the person read from its user endpoint by the provider's claim mapping. The upstream is a small
// GitHub-like server on loopback that checks the client's secret, the redirect URI and PKCE S256 itself.

const { app, base } = await listeningApp(t, { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' })
const tenant = await createTenant(app)
const github = await startOAuth2Upstream(t)
const admin = { token: await tokenFor(app, await createUser(app, tenant, { roles: ['admin'] })) }
// The kit's addProvider is for the oidc upstream; the flow and the login are the same for both kinds.
const { federate, login } = federationKit(
  { app, base, tenant, admin, returnTo: `${base}/console/sign-in` },
  await startUpstream(t),
)

/** A GitHub-preset provider whose endpoints are the loopback server's. */
async function addGitHub(settings: Record<string, unknown> = {}) {
  const res = await call(app, 'createIdentityProvider', admin, {
    body: {
      name: 'GitHub',
      kind: 'oauth2',
      preset: 'github',
      clientId: github.clientId,
      clientSecret: github.clientSecret,
      authorizationEndpoint: `${github.base}/login/oauth/authorize`,
      tokenEndpoint: `${github.base}/login/oauth/access_token`,
      userinfoEndpoint: `${github.base}/user`,
      allowSignup: true,
      ...settings,
    },
  })
  if (res.status !== 201) throw new Error(res.raw)
  return res.data
}

t.test(
  'federationAuthorize, federationCallback, loginFederated: an oauth2 provider like GitHub',
  async (t) => {
    const provider = await addGitHub()
    const first = await federate(github, provider.id)
    const code = first.fragment?.get('login_code') ?? null
    t.ok(code, `a login code: ${String(first.fragment)}`)
    const token = github.tokenRequests.at(-1)
    t.equal(token?.get('grant_type'), 'authorization_code')
    t.ok(token?.get('code_verifier'), 'the service sent its PKCE verifier, and the server checked it')
    const res = await login(code, first.verifier)
    t.equal(res.status, 200, res.raw)
    t.equal(res.data.user.email, 'octo@acme.test', 'the email from /user')
    t.equal(res.data.user.username, 'octo', 'the username from `login`, by the preset’s mapping')
    t.equal(
      (await userRow(app, tenant.id, res.data.user.id))?.email_verified,
      false,
      'no verified-email claim: the email stays unverified',
    )
    const identity = await app.ctx.dbs
      .forTenant(tenant.id)
      .selectFrom('user_identities')
      .select(['subject', 'user_id'])
      .where('provider_id', '=', provider.id)
      .executeTakeFirst()
    t.match(identity, { subject: '4242', user_id: res.data.user.id }, 'the numeric id is the subject')
    const again = await federate(github, provider.id, {
      person: { sub: '4242', email: 'renamed@acme.test', preferred_username: 'octo2' },
    })
    const second = await login(again.fragment?.get('login_code') ?? null, again.verifier)
    t.equal(second.data.user.id, res.data.user.id, 'the same id signs the same user in, whatever its email')
    const twin = await federate(github, provider.id, {
      person: { sub: '4343', email: 'twin@acme.test', preferred_username: 'Octo' },
    })
    const other = await login(twin.fragment?.get('login_code') ?? null, twin.verifier)
    t.equal(other.status, 200, other.raw)
    t.notOk(other.data.user.username, 'a username someone holds is not taken: the new user has none')
  },
)

t.test('federationCallback: an oauth2 provider that refuses the client or the person', async (t) => {
  const wrongSecret = await addGitHub({ clientSecret: 'not-the-secret' })
  const refused = await federate(github, wrongSecret.id, {
    person: { sub: '777', email: 'refused@acme.test', preferred_username: 'refused' },
  })
  t.equal(refused.fragment?.get('error'), 'provider_error', 'the token endpoint refused the client')
  const noUser = await addGitHub({ userinfoEndpoint: `${github.base}/no-such-endpoint` })
  const nobody = await federate(github, noUser.id)
  t.equal(nobody.fragment?.get('error'), 'provider_error', 'the user endpoint did not answer a person')
  const made = await app.ctx.dbs
    .forTenant(tenant.id)
    .selectFrom('users')
    .select('id')
    .where('email', '=', 'refused@acme.test')
    .executeTakeFirst()
  t.notOk(made, 'no user written')
})
