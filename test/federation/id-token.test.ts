import t from 'tap'
import type { JWTPayload } from 'jose'
import { createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { listeningApp } from '../helpers/oidc.js'
import { federationKit } from '../helpers/federation.js'
import { startUpstream } from '../helpers/upstream.js'

// The upstream's ID token, as the relying party must judge it (contract section 24, "The sign-in flow"): the
// real upstream's token response is rewritten on its way out, re-signed with the upstream's own key, so only
// the claim under test is wrong. Each one is refused at the callback, and nothing is written: no user, no
// identity, no login code.

const { app, base } = await listeningApp(t, { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' })
const tenant = await createTenant(app)
const upstream = await startUpstream(t, {
  redirectUris: [`${base}/t/${tenant.code}/federation/callback`],
})
const admin = { token: await tokenFor(app, await createUser(app, tenant, { roles: ['admin'] })) }
const { addProvider, federate, login } = federationKit(
  { app, base, tenant, admin, returnTo: `${base}/console/sign-in` },
  upstream,
)
const provider = await addProvider({ allowSignup: true })
const db = app.ctx.dbs.forTenant(tenant.id)

/** How many rows the callback could have written: users, identities, login codes. */
async function written() {
  const count = async (table: 'users' | 'user_identities' | 'federation_codes') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((e) => e.fn.countAll().as('n'))
          .where('tenant_id', '=', tenant.id)
          .executeTakeFirstOrThrow()
      ).n,
    )
  return {
    users: await count('users'),
    identities: await count('user_identities'),
    codes: await count('federation_codes'),
  }
}

const now = () => Math.floor(Date.now() / 1000)
const cases: [string, { claims?: (c: JWTPayload) => JWTPayload; foreignKey?: boolean }][] = [
  ['a wrong aud', { claims: (c) => ({ ...c, aud: 'another-client' }) }],
  ['a wrong iss', { claims: (c) => ({ ...c, iss: 'http://127.0.0.1:1/not-the-issuer' }) }],
  ['a wrong nonce', { claims: (c) => ({ ...c, nonce: 'not-the-flows-nonce' }) }],
  ['an expired one', { claims: (c) => ({ ...c, iat: now() - 7200, exp: now() - 3600 }) }],
  ['one signed by another key', { foreignKey: true }],
]

t.test(
  'federationCallback: an upstream ID token re-signed unchanged is taken (the harness can pass)',
  async (t) => {
    upstream.tamper = { claims: (c) => c }
    t.teardown(() => void (upstream.tamper = undefined))
    const flow = await federate(upstream, provider.id, {
      person: { sub: 'p-control', email: 'control@acme.test', email_verified: true },
    })
    const res = await login(flow.fragment?.get('login_code') ?? null, flow.verifier)
    t.equal(res.status, 200, res.raw)
    t.equal(res.data.user.email, 'control@acme.test')
  },
)

for (const [name, tamper] of cases) {
  t.test(`federationCallback: an upstream ID token with ${name} is refused, nothing written`, async (t) => {
    const before = await written()
    upstream.tamper = tamper
    t.teardown(() => void (upstream.tamper = undefined))
    const email = `${name.replace(/\W+/g, '-')}@acme.test`
    const flow = await federate(upstream, provider.id, {
      person: { sub: `p-${email}`, email, email_verified: true },
    })
    t.equal(flow.status, 302, 'the browser is sent back to return_to')
    t.equal(flow.fragment?.get('error'), 'provider_error', String(flow.fragment))
    t.notOk(flow.fragment?.get('login_code'), 'no login code')
    t.same(await written(), before, 'no user, identity or login code written')
    const user = await db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst()
    t.notOk(user, 'no user with the upstream’s email')
  })
}
