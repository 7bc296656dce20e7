import t from 'tap'
import { call } from '../helpers/call.js'
import { auditRows, createTenant, createUser, tokenFor, userRow } from '../helpers/fixtures.js'
import { Browser, listeningApp } from '../helpers/oidc.js'
import { federationKit, pkce } from '../helpers/federation.js'
import { startUpstream } from '../helpers/upstream.js'
import type { TestApp } from '../helpers/app.js'
import type { TenantFx } from '../helpers/fixtures.js'

// The browser's sign-in through another provider (contract section 24, "The sign-in flow" and "Whose
// account it is"), end to end on loopback: a listening service, a real upstream oidc-provider whose scripted
// person signs in and consents, and a browser (cookies kept, redirects followed by hand) between them.

const { app, base } = await listeningApp(t, { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' })
const tenant = await createTenant(app)
const upstream = await startUpstream(t, {
  redirectUris: [`${base}/t/${tenant.code}/federation/callback`],
})
const admin = { token: await tokenFor(app, await createUser(app, tenant, { roles: ['admin'] })) }
const RETURN_TO = `${base}/console/sign-in`

const { addProvider, federate, login, callback } = federationKit(
  { app, base, tenant, admin, returnTo: RETURN_TO },
  upstream,
)

t.test(
  'federationAuthorize, federationCallback, loginFederated: a first sign-in signs up, the next one signs in',
  async (t) => {
    const provider = await addProvider({ allowSignup: true })
    const person = { sub: 'person-signup', email: 'newcomer@acme.test', email_verified: true }
    const first = await federate(upstream, provider.id, { person })
    t.equal(first.status, 302)
    const code = first.fragment?.get('login_code') ?? null
    t.ok(code, `a login code in the fragment: ${first.fragment?.toString()}`)
    const wrong = await login(code, pkce().verifier)
    t.equal(wrong.code, 'INVALID_CREDENTIALS', 'another verifier: refused')
    const again = await federate(upstream, provider.id)
    const good = await login(again.fragment?.get('login_code') ?? null, again.verifier)
    t.equal(good.status, 200, good.raw)
    t.ok(good.data.accessToken)
    t.equal(good.data.user.email, 'newcomer@acme.test')
    const row = await userRow(app, tenant.id, good.data.user.id)
    t.equal(row?.email_verified, true, 'verified as the provider says')
    const reused = await login(again.fragment?.get('login_code') ?? null, again.verifier)
    t.equal(reused.code, 'INVALID_CREDENTIALS', 'a login code works once')
    const third = await federate(upstream, provider.id)
    const signedIn = await login(third.fragment?.get('login_code') ?? null, third.verifier)
    t.equal(signedIn.data.user.id, good.data.user.id, 'the link signs the same user in again')
    const registers = (await auditRows(app, tenant.id, 'REGISTER')).filter(
      (r) => r.user_id === good.data.user.id,
    )
    t.match(
      registers,
      [{ success: true, metadata: { via: 'federated', providerId: provider.id } }],
      'one sign-up',
    )
    const logins = (await auditRows(app, tenant.id, 'LOGIN')).filter((r) => r.metadata.method === 'federated')
    t.ok(
      logins.some((r) => r.success && r.metadata.providerId === provider.id),
      'a LOGIN row, method federated',
    )
    t.ok(
      logins.some((r) => !r.success),
      'and the refusals’ rows',
    )
    // The same rows through the API, as the document describes them (the contract guard checks the answer).
    const listed = await call(app, 'listAuthLogs', admin, { query: { userId: good.data.user.id } })
    t.equal(listed.status, 200, listed.raw)
    t.match(listed.data.items.find((r) => r.action === 'REGISTER')?.metadata, {
      via: 'federated',
      providerId: provider.id,
    })
    t.ok(listed.data.items.some((r) => r.action === 'LOGIN' && r.metadata.method === 'federated'))
    const password = await call(
      app,
      'login',
      {},
      {
        body: { tenantCode: tenant.code, identifier: 'newcomer@acme.test', password: 'anything-at-all-1' },
      },
    )
    t.equal(password.code, 'INVALID_CREDENTIALS', 'a user made by a provider has no password')
    const metrics = await call(app, 'getMetrics')
    t.match(metrics.raw, /tessera_federated_logins_total\{result="success"\} [1-9]/, 'the sign-ins counted')
    t.match(metrics.raw, /tessera_federated_logins_total\{result="failure"\} [1-9]/, 'and the refusals')
  },
)

t.test('federationCallback: a browser without the flow’s cookie, and a tampered state', async (t) => {
  const provider = await addProvider({ allowSignup: true })
  const elsewhere = await federate(upstream, provider.id, {
    person: { sub: 'csrf', email: 'csrf@acme.test', email_verified: true },
    atCallback: new Browser(),
  })
  t.equal(elsewhere.fragment?.get('error'), 'provider_error', 'another browser: provider_error')
  t.notOk(elsewhere.fragment?.get('login_code'))
  const tampered = await federate(upstream, provider.id, { tamperState: true })
  t.equal(tampered.status, 400, 'a state naming no flow: 400, nowhere to send the browser')
  t.match(tampered.body, /VALIDATION_ERROR/)
})

t.test(
  'federationAuthorize: 400 for a return_to that is not allowed, 404 for another tenant’s provider',
  async (t) => {
    const provider = await addProvider()
    for (const returnTo of [
      'https://evil.example/cb',
      `${base}/api/v1/me`,
      `${base}/t/other/interaction/x`,
    ]) {
      const res = await federate(upstream, provider.id, { returnTo })
      t.equal(res.status, 400, returnTo)
      t.match(res.body, /VALIDATION_ERROR/)
    }
    const other = await createTenant(app)
    const b = new Browser()
    const { challenge } = pkce()
    const q = new URLSearchParams({
      return_to: RETURN_TO,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    })
    const foreign = await b.fetch(`${base}/t/${other.code}/federation/${provider.id}/authorize?${q}`)
    t.equal(foreign.status, 404)
    t.match(await foreign.text(), /IDENTITY_PROVIDER_NOT_FOUND/)
  },
)

/** A user of the tenant with this email, its verification as given. */
async function holder(email: string, verified: boolean, t2: TenantFx = tenant, a: TestApp = app) {
  const user = await createUser(a, t2, { roles: ['user'], email })
  await a.ctx.dbs
    .forTenant(t2.id)
    .updateTable('users')
    .set({ email_verified: verified })
    .where('id', '=', user.id)
    .execute()
  return user
}

t.test('whose account: each linking rule, both ways', async (t) => {
  const linking = await addProvider({ linking: 'verified_email' })
  const verified = await holder('verified@acme.test', true)
  const linked = await federate(upstream, linking.id, {
    person: { sub: 'p-verified', email: 'verified@acme.test', email_verified: true },
  })
  const res = await login(linked.fragment?.get('login_code') ?? null, linked.verifier)
  t.equal(res.data.user.id, verified.id, 'verified on both sides: linked to the existing user')
  t.match(
    await auditRows(app, tenant.id, 'IDENTITY_LINKED'),
    [{ user_id: verified.id, actor_type: 'user', actor_id: verified.id }],
    'linked, with its actor: the person signing in',
  )

  await holder('unverified-local@acme.test', false)
  const local = await federate(upstream, linking.id, {
    person: { sub: 'p-local', email: 'unverified-local@acme.test', email_verified: true },
  })
  t.equal(local.fragment?.get('error'), 'account_not_linked', 'an unverified local email never links')

  await holder('unverified-up@acme.test', true)
  const up = await federate(upstream, linking.id, {
    person: { sub: 'p-up', email: 'unverified-up@acme.test', email_verified: false },
  })
  t.equal(up.fragment?.get('error'), 'account_not_linked', 'an unverified upstream email never links')

  const never = await addProvider({ linking: 'never', allowSignup: true })
  const n = await federate(upstream, never.id, {
    person: { sub: 'p-never', email: 'verified@acme.test', email_verified: true },
  })
  t.equal(
    n.fragment?.get('error'),
    'account_not_linked',
    'linking never: an account with that email is not taken',
  )

  const closed = await addProvider({ allowSignup: false })
  const c = await federate(upstream, closed.id, {
    person: { sub: 'p-closed', email: 'nobody@acme.test', email_verified: true },
  })
  t.equal(c.fragment?.get('error'), 'signup_disabled')

  const domains = await addProvider({ allowSignup: true, allowedDomains: ['partner.test'] })
  const outside = await federate(upstream, domains.id, {
    person: { sub: 'p-outside', email: 'someone@acme.test', email_verified: true },
  })
  t.equal(outside.fragment?.get('error'), 'signup_disabled', 'a domain outside allowedDomains')
  const inside = await federate(upstream, domains.id, {
    person: { sub: 'p-inside', email: 'someone@partner.test', email_verified: false },
  })
  const made = await login(inside.fragment?.get('login_code') ?? null, inside.verifier)
  t.equal(made.status, 200, 'inside the domains: signed up')
  t.equal(
    (await userRow(app, tenant.id, made.data.user.id))?.email_verified,
    false,
    'an unverified email stays unverified',
  )
})

t.test('an inactive user and a user with a second factor', async (t) => {
  const provider = await addProvider({ linking: 'verified_email' })
  const inactive = await holder('sleeper@acme.test', true)
  await app.ctx.dbs
    .forTenant(tenant.id)
    .updateTable('users')
    .set({ status: 'INACTIVE' })
    .where('id', '=', inactive.id)
    .execute()
  const slept = await federate(upstream, provider.id, {
    person: { sub: 'p-sleeper', email: 'sleeper@acme.test', email_verified: true },
  })
  t.equal(slept.fragment?.get('error'), 'user_inactive')
  t.match(
    (await call(app, 'getMetrics')).raw,
    /tessera_federated_logins_total\{result="user_inactive"\} [1-9]/,
    'a callback’s error counted by its code',
  )
  const sleeperLinks = await app.ctx.dbs
    .forTenant(tenant.id)
    .selectFrom('user_identities')
    .select('id')
    .where('user_id', '=', inactive.id)
    .execute()
  t.same(sleeperLinks, [], 'the inactive holder’s identity is not linked either: nothing written')
  const guarded = await holder('guarded@acme.test', true)
  await app.ctx.dbs
    .forTenant(tenant.id)
    .updateTable('users')
    .set({ otp_enabled: true })
    .where('id', '=', guarded.id)
    .execute()
  const flow = await federate(upstream, provider.id, {
    person: { sub: 'p-guarded', email: 'guarded@acme.test', email_verified: true },
  })
  const res = await login(flow.fragment?.get('login_code') ?? null, flow.verifier)
  t.equal(res.status, 401)
  t.match(res.code, /^OTP_(REQUIRED|ENROLLMENT_REQUIRED)$/, 'section 16’s second step')
  t.match(res.raw, /mfaToken/)
})

t.test('federationCallback: a refusal of the account step ends at return_to, not as JSON', async (t) => {
  const role = await call(app, 'createRole', admin, { body: { name: 'short-lived' } })
  t.equal(role.status, 201, role.raw)
  const provider = await addProvider({ allowSignup: true, defaultRoles: ['short-lived'] })
  t.equal((await call(app, 'deleteRole', admin, { params: { id: role.data.id } })).status, 200)
  const flow = await federate(upstream, provider.id, {
    person: { sub: 'p-roleless', email: 'roleless@acme.test', email_verified: true },
  })
  t.equal(flow.status, 302, 'the browser goes back to return_to')
  t.equal(flow.fragment?.get('error'), 'provider_error', String(flow.fragment))
  const made = await app.ctx.dbs
    .forTenant(tenant.id)
    .selectFrom('users')
    .select('id')
    .where('email', '=', 'roleless@acme.test')
    .executeTakeFirst()
  t.notOk(made, 'no user written')
})

t.test(
  'the declared refusals: an unknown tenant, an inactive user at login, a provider that stopped answering',
  async (t) => {
    const res = await call(
      app,
      'loginFederated',
      {},
      {
        body: { tenantCode: 'no-such-tenant', code: 'x', codeVerifier: pkce().verifier },
      },
    )
    t.equal(res.code, 'TENANT_NOT_FOUND')
    const cb = await new Browser().fetch(`${base}/t/no-such-tenant/federation/callback?state=x`)
    t.equal(cb.status, 404, 'a callback to no tenant')
    const provider = await addProvider({ allowSignup: true })
    const flow = await federate(upstream, provider.id, {
      person: { sub: 'p-late', email: 'late@acme.test', email_verified: true },
    })
    const code = flow.fragment?.get('login_code') ?? null
    const made = await app.ctx.dbs
      .forTenant(tenant.id)
      .updateTable('users')
      .set({ status: 'INACTIVE' })
      .where('email', '=', 'late@acme.test')
      .returning('id')
      .execute()
    t.equal(made.length, 1)
    const late = await login(code, flow.verifier)
    t.equal(late.status, 403)
    t.equal(late.code, 'USER_INACTIVE', 'deactivated between the callback and the login')
    const gone = await startUpstream(t, { redirectUris: [callback] })
    const stopped = await call(app, 'createIdentityProvider', admin, {
      body: {
        name: 'Gone',
        kind: 'oidc',
        issuer: gone.issuer,
        clientId: gone.clientId,
        clientSecret: gone.clientSecret,
      },
    })
    await gone.close()
    const b = new Browser()
    const { challenge } = pkce()
    const q = new URLSearchParams({
      return_to: RETURN_TO,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    })
    const unreachable = await b.fetch(`${base}/t/${tenant.code}/federation/${stopped.data.id}/authorize?${q}`)
    t.equal(unreachable.status, 422)
    t.match(await unreachable.text(), /IDENTITY_PROVIDER_UNREACHABLE/)
  },
)
