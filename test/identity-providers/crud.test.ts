import t from 'tap'
import { createServer } from 'node:net'
import { buildTestApp } from '../helpers/app.js'
import { call, unchecked } from '../helpers/call.js'
import {
  auditRows,
  createTenant,
  createUser,
  insertRole,
  tokenFor,
  UNKNOWN_ID,
  userWithToken,
} from '../helpers/fixtures.js'
import { startUpstream } from '../helpers/upstream.js'
import { decryptSecret } from '../../src/lib/crypto-box.js'

// Identity providers (contract section 24, "Providers, per tenant"): the management operations and the
// sign-in page's list, against a real upstream OpenID provider (oidc-provider on loopback, listed in
// OUTBOUND_ALLOWED_HOSTS as the hidden suite lists it) and GitHub's preset (its hosts listed: no test
// resolves or reaches a name outside loopback).

const app = await buildTestApp(t, { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1,github.com,api.github.com' })
const upstream = await startUpstream(t)
const tenant = await createTenant(app)
const other = await createTenant(app)
const admin = await createUser(app, tenant, { roles: ['admin'] })
const as = { token: await tokenFor(app, admin) }
const otherAdmin = { token: await tokenFor(app, await createUser(app, other, { roles: ['admin'] })) }
const oidc = {
  name: 'Company SSO',
  kind: 'oidc' as const,
  issuer: upstream.issuer,
  clientId: upstream.clientId,
  clientSecret: upstream.clientSecret,
}

/** A loopback port with nothing listening. */
async function deadPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

const count = async () =>
  Number(
    (
      await app.ctx.dbs
        .forTenant(tenant.id)
        .selectFrom('identity_providers')
        .select((e) => e.fn.countAll().as('n'))
        .where('tenant_id', '=', tenant.id)
        .executeTakeFirstOrThrow()
    ).n,
  )

t.test('createIdentityProvider: POST /identity-providers', async (t) => {
  await t.test(
    'an oidc provider: its endpoints from discovery, the secret sealed, never answered',
    async (t) => {
      const res = await call(app, 'createIdentityProvider', as, { body: { ...oidc, allowSignup: true } })
      t.equal(res.status, 201, res.raw)
      const p = res.data
      t.match(p, {
        kind: 'oidc',
        preset: null,
        issuer: upstream.issuer,
        authorizationEndpoint: `${upstream.issuer}/auth`,
        tokenEndpoint: `${upstream.issuer}/token`,
        userinfoEndpoint: `${upstream.issuer}/me`,
        tokenEndpointAuthMethod: 'client_secret_basic',
        scopes: ['openid', 'email', 'profile'],
        claimMapping: {
          sub: 'sub',
          email: 'email',
          emailVerified: 'email_verified',
          username: 'preferred_username',
        },
        allowSignup: true,
        trustEmail: false,
        linking: 'never',
        allowedDomains: [],
        defaultRoles: [],
        showOnLogin: true,
        callbackUrl: `${app.ctx.config.publicUrl}/t/${tenant.code}/federation/callback`,
      })
      t.notMatch(res.raw, upstream.clientSecret, 'the secret is never answered')
      const row = await app.ctx.dbs
        .forTenant(tenant.id)
        .selectFrom('identity_providers')
        .select(['client_secret_enc', 'jwks_uri'])
        .where('id', '=', p.id)
        .executeTakeFirstOrThrow()
      t.notMatch(row.client_secret_enc, upstream.clientSecret, 'sealed at rest')
      t.equal(decryptSecret(row.client_secret_enc, app.ctx.secretsKey, `idp:${p.id}`), upstream.clientSecret)
      t.equal(row.jwks_uri, `${upstream.issuer}/jwks`)
      const [audit] = await auditRows(app, tenant.id, 'IDENTITY_PROVIDER_CREATE')
      t.match(audit, { success: true, actor_id: admin.id })
      t.match(audit?.metadata, { target: { type: 'identity_provider', id: p.id }, providerId: p.id })
      t.notMatch(JSON.stringify(audit), upstream.clientSecret, 'no secret in the audit row')
    },
  )

  await t.test('the GitHub preset: its endpoints and mapping filled in (an oauth2 provider)', async (t) => {
    const res = await call(app, 'createIdentityProvider', as, {
      body: {
        name: 'GitHub',
        kind: 'oauth2',
        preset: 'github',
        clientId: 'gh-id',
        clientSecret: 'gh-secret',
      },
    })
    t.equal(res.status, 201, res.raw)
    t.match(res.data, {
      preset: 'github',
      issuer: null,
      authorizationEndpoint: 'https://github.com/login/oauth/authorize',
      tokenEndpoint: 'https://github.com/login/oauth/access_token',
      userinfoEndpoint: 'https://api.github.com/user',
      scopes: ['read:user', 'user:email'],
      claimMapping: { sub: 'id', username: 'login', email: 'email', emailVerified: 'email_verified' },
    })
  })

  await t.test(
    '400 VALIDATION_ERROR, nothing stored, no connection: hosts the service may not reach',
    async (t) => {
      const before = await count()
      const port = new URL(upstream.issuer).port
      const cases: [string, Record<string, unknown>][] = [
        ['http on a host not listed', { issuer: `http://localhost:${port}` }],
        ['a loopback address not listed', { issuer: 'https://127.0.0.2/' }],
        ['a private address', { issuer: 'https://10.0.0.7/' }],
        ['a link-local address', { issuer: 'https://169.254.169.254/' }],
        ['a name that resolves to loopback', { issuer: 'https://localhost/' }],
        ['credentials in the URL', { issuer: `http://user:pw@127.0.0.1:${port}` }],
      ]
      for (const [what, change] of cases) {
        const res = await call(app, 'createIdentityProvider', as, { body: { ...oidc, ...change } })
        t.equal(res.status, 400, `${what}: ${res.raw}`)
        t.equal(res.code, 'VALIDATION_ERROR')
      }
      const oauth2 = await call(app, 'createIdentityProvider', as, {
        body: {
          name: 'Plain',
          kind: 'oauth2',
          clientId: 'x',
          clientSecret: 'y',
          authorizationEndpoint: 'https://github.com/a',
          tokenEndpoint: 'http://github.com/t',
          userinfoEndpoint: 'https://api.github.com/u',
        },
      })
      t.equal(oauth2.status, 201, 'github.com is listed: http allowed there')
      const missing = await call(app, 'createIdentityProvider', as, {
        body: { name: 'Plain', kind: 'oauth2', clientId: 'x', clientSecret: 'y' },
      })
      t.equal(missing.code, 'VALIDATION_ERROR', 'oauth2 without its endpoints')
      const noIssuer = await call(app, 'createIdentityProvider', as, { body: { ...oidc, issuer: undefined } })
      t.equal(noIssuer.code, 'VALIDATION_ERROR', 'oidc without issuer or preset')
      const wrongKind = await call(app, 'createIdentityProvider', as, {
        body: { ...oidc, kind: 'oauth2', preset: 'google' },
      })
      t.equal(wrongKind.code, 'VALIDATION_ERROR', 'a preset of the other kind')
      const shape = await call(
        app,
        'createIdentityProvider',
        as,
        unchecked({ body: { ...oidc, kind: 'saml' } }),
      )
      t.equal(shape.status, 400, 'an unknown kind')
      t.equal(await count(), before + 1, 'only the listed-host oauth2 provider was stored')
    },
  )

  await t.test(
    '422 IDENTITY_PROVIDER_UNREACHABLE: no answer, no document, another issuer; nothing stored',
    async (t) => {
      const before = await count()
      const localhostIssuer = await startUpstream(t, { host: 'localhost' })
      const cases: [string, string][] = [
        ['nothing listens', `http://127.0.0.1:${await deadPort()}`],
        ['no discovery document there', `${upstream.issuer}/elsewhere`],
        ['the document names another issuer', localhostIssuer.issuer.replace('localhost', '127.0.0.1')],
      ]
      for (const [what, issuer] of cases) {
        const res = await call(app, 'createIdentityProvider', as, { body: { ...oidc, issuer } })
        t.equal(res.status, 422, `${what}: ${res.raw}`)
        t.equal(res.code, 'IDENTITY_PROVIDER_UNREACHABLE')
      }
      const unresolvable = await call(app, 'createIdentityProvider', as, {
        body: { ...oidc, issuer: 'https://no-such-provider.invalid' },
      })
      t.equal(unresolvable.code, 'IDENTITY_PROVIDER_UNREACHABLE', 'a name that does not resolve')
      t.equal(await count(), before)
    },
  )

  await t.test(
    'defaultRoles as a publishable key’s: 404 ROLE_NOT_FOUND, 403 FORBIDDEN, 403 ROLE_HIERARCHY_VIOLATION',
    async (t) => {
      const unknown = await call(app, 'createIdentityProvider', as, {
        body: { ...oidc, defaultRoles: ['nope'] },
      })
      t.equal(unknown.code, 'ROLE_NOT_FOUND', unknown.raw)
      const managing = await call(app, 'createIdentityProvider', as, {
        body: { ...oidc, defaultRoles: ['admin'] },
      })
      t.equal(managing.code, 'FORBIDDEN', 'a role holding management permissions')
      await insertRole(app, tenant, 'idp-manager', 5, ['identity-providers:create', 'auth:logs'])
      await insertRole(app, tenant, 'high-logs', 100, ['auth:logs'])
      const manager = await userWithToken(app, tenant, { roles: ['idp-manager'] })
      const high = await call(app, 'createIdentityProvider', manager.cred, {
        body: { ...oidc, defaultRoles: ['high-logs'] },
      })
      t.equal(high.code, 'ROLE_HIERARCHY_VIOLATION')
      const user = await call(app, 'createIdentityProvider', as, {
        body: { ...oidc, defaultRoles: ['user'] },
      })
      t.equal(user.status, 201, 'the built-in user role may be given')
      t.same(user.data.defaultRoles, ['user'])
    },
  )

  await t.test('401 REAUTHENTICATION_REQUIRED for a stale sign-in; 403 without the permission', async (t) => {
    const stale = {
      token: await tokenFor(app, admin, 900, { authTime: Math.floor(Date.now() / 1000) - 3600 }),
    }
    t.equal(
      (await call(app, 'createIdentityProvider', stale, { body: oidc })).code,
      'REAUTHENTICATION_REQUIRED',
    )
    const member = { token: await tokenFor(app, await createUser(app, tenant, { roles: ['user'] })) }
    t.equal((await call(app, 'createIdentityProvider', member, { body: oidc })).code, 'FORBIDDEN')
    t.equal((await call(app, 'createIdentityProvider', {}, unchecked({ body: oidc }))).status, 401)
  })
})

t.test('listIdentityProviders, getIdentityProvider: the tenant’s own, newest first', async (t) => {
  const created = (await call(app, 'createIdentityProvider', as, { body: { ...oidc, name: 'Newest' } })).data
  const list = await call(app, 'listIdentityProviders', as, { query: { limit: 100 } })
  t.equal(list.status, 200)
  t.equal(list.data.items[0]?.id, created.id, 'newest first')
  t.notMatch(list.raw, upstream.clientSecret)
  const got = await call(app, 'getIdentityProvider', as, { params: { id: created.id } })
  t.equal(got.data.name, 'Newest')
  const foreign = await call(app, 'getIdentityProvider', otherAdmin, { params: { id: created.id } })
  t.equal(foreign.code, 'IDENTITY_PROVIDER_NOT_FOUND', 'another tenant’s id is not revealed')
  t.equal((await call(app, 'listIdentityProviders', otherAdmin, {})).data.total, 0)
  t.equal((await call(app, 'getIdentityProvider', as, { params: { id: UNKNOWN_ID } })).status, 404)
  t.equal((await call(app, 'getIdentityProvider', as, unchecked({ params: { id: 'x' } }))).status, 400)
  t.equal((await call(app, 'listIdentityProviders', as, unchecked({ query: { limit: 101 } }))).status, 400)
  const member = { token: await tokenFor(app, await createUser(app, tenant, { roles: ['user'] })) }
  t.equal((await call(app, 'listIdentityProviders', member, {})).code, 'FORBIDDEN')
  t.equal((await call(app, 'getIdentityProvider', member, { params: { id: created.id } })).code, 'FORBIDDEN')
  t.equal((await call(app, 'listIdentityProviders', {}, unchecked({}))).status, 401)
})

t.test(
  'updateIdentityProvider: a claimMapping is merged into the stored one (a preset’s survives)',
  async (t) => {
    const gh = await call(app, 'createIdentityProvider', as, {
      body: {
        name: 'GitHub',
        kind: 'oauth2',
        preset: 'github',
        clientId: 'gh-id',
        clientSecret: 'gh-secret',
      },
    })
    t.equal(gh.status, 201, gh.raw)
    const res = await call(app, 'updateIdentityProvider', as, {
      params: { id: gh.data.id },
      body: { claimMapping: { email: 'primary_email' } },
    })
    t.equal(res.status, 200, res.raw)
    t.same(res.data.claimMapping, {
      sub: 'id',
      username: 'login',
      email: 'primary_email',
      emailVerified: 'email_verified',
    })
  },
)

t.test(
  'updateIdentityProvider: the given fields; a new secret sealed; a new issuer read again',
  async (t) => {
    const p = (await call(app, 'createIdentityProvider', as, { body: oidc })).data
    const res = await call(app, 'updateIdentityProvider', as, {
      params: { id: p.id },
      body: {
        name: 'Renamed',
        clientSecret: 'a-new-upstream-secret',
        linking: 'verified_email',
        allowedDomains: ['Acme.TEST'],
        showOnLogin: false,
      },
    })
    t.equal(res.status, 200, res.raw)
    t.match(res.data, {
      name: 'Renamed',
      linking: 'verified_email',
      allowedDomains: ['acme.test'],
      showOnLogin: false,
    })
    const row = await app.ctx.dbs
      .forTenant(tenant.id)
      .selectFrom('identity_providers')
      .select('client_secret_enc')
      .where('id', '=', p.id)
      .executeTakeFirstOrThrow()
    t.equal(decryptSecret(row.client_secret_enc, app.ctx.secretsKey, `idp:${p.id}`), 'a-new-upstream-secret')
    const audits = await auditRows(app, tenant.id, 'IDENTITY_PROVIDER_UPDATE')
    const last = audits[audits.length - 1]
    t.same(last?.metadata.changed, ['allowedDomains', 'clientSecret', 'linking', 'name', 'showOnLogin'])
    t.notMatch(JSON.stringify(last), 'a-new-upstream-secret', 'the field’s name, never its value')
    const moved = await call(app, 'updateIdentityProvider', as, {
      params: { id: p.id },
      body: { issuer: `http://127.0.0.1:${await deadPort()}` },
    })
    t.equal(moved.code, 'IDENTITY_PROVIDER_UNREACHABLE', 'a new issuer is read again')
    t.equal(
      (await call(app, 'getIdentityProvider', as, { params: { id: p.id } })).data.issuer,
      upstream.issuer,
    )
    const refused = await call(app, 'updateIdentityProvider', as, {
      params: { id: p.id },
      body: { issuer: 'https://10.1.2.3' },
    })
    t.equal(refused.code, 'VALIDATION_ERROR')
    t.equal(
      (await call(app, 'updateIdentityProvider', as, unchecked({ params: { id: p.id }, body: {} }))).status,
      400,
    )
    t.equal(
      (
        await call(
          app,
          'updateIdentityProvider',
          as,
          unchecked({ params: { id: p.id }, body: { kind: 'oauth2' } }),
        )
      ).status,
      400,
      'kind cannot change',
    )
    const foreign = await call(app, 'updateIdentityProvider', otherAdmin, {
      params: { id: p.id },
      body: { name: 'x' },
    })
    t.equal(foreign.code, 'IDENTITY_PROVIDER_NOT_FOUND')
    const stale = {
      token: await tokenFor(app, admin, 900, { authTime: Math.floor(Date.now() / 1000) - 3600 }),
    }
    t.equal(
      (await call(app, 'updateIdentityProvider', stale, { params: { id: p.id }, body: { name: 'x' } })).code,
      'REAUTHENTICATION_REQUIRED',
    )
    const bad = await call(app, 'updateIdentityProvider', as, {
      params: { id: p.id },
      body: { defaultRoles: ['nope'] },
    })
    t.equal(bad.code, 'ROLE_NOT_FOUND')
  },
)

t.test('deleteIdentityProvider: gone, with its links; the tenant’s own only', async (t) => {
  const p = (await call(app, 'createIdentityProvider', as, { body: oidc })).data
  const foreign = await call(app, 'deleteIdentityProvider', otherAdmin, { params: { id: p.id } })
  t.equal(foreign.code, 'IDENTITY_PROVIDER_NOT_FOUND')
  const member = await createUser(app, tenant, { roles: ['user'] })
  await app.ctx.dbs
    .forTenant(tenant.id)
    .insertInto('user_identities')
    .values({ tenant_id: tenant.id, user_id: member.id, provider_id: p.id, subject: 'upstream-sub' })
    .execute()
  const res = await call(app, 'deleteIdentityProvider', as, { params: { id: p.id } })
  t.same(res.data, { id: p.id, deleted: true })
  const links = await app.ctx.dbs
    .forTenant(tenant.id)
    .selectFrom('user_identities')
    .select('id')
    .where('provider_id', '=', p.id)
    .execute()
  t.same(links, [], 'its links went with it')
  t.equal((await call(app, 'deleteIdentityProvider', as, { params: { id: p.id } })).status, 404)
  const [audit] = (await auditRows(app, tenant.id, 'IDENTITY_PROVIDER_DELETE')).slice(-1)
  t.match(audit?.metadata, { target: { type: 'identity_provider', id: p.id } })
  const stale = { token: await tokenFor(app, admin, 900, { authTime: Math.floor(Date.now() / 1000) - 3600 }) }
  t.equal(
    (await call(app, 'deleteIdentityProvider', stale, { params: { id: UNKNOWN_ID } })).code,
    'REAUTHENTICATION_REQUIRED',
  )
})

t.test('listLoginProviders: the sign-in page’s providers, public; none for an unknown tenant', async (t) => {
  const fresh = await createTenant(app)
  const freshAdmin = { token: await tokenFor(app, await createUser(app, fresh, { roles: ['admin'] })) }
  const shown = (await call(app, 'createIdentityProvider', freshAdmin, { body: { ...oidc, name: 'Shown' } }))
    .data
  await call(app, 'createIdentityProvider', freshAdmin, {
    body: { ...oidc, name: 'Hidden', showOnLogin: false },
  })
  const res = await call(app, 'listLoginProviders', {}, { query: { tenantCode: fresh.code.toUpperCase() } })
  t.equal(res.status, 200)
  t.same(res.data, { items: [{ id: shown.id, name: 'Shown', kind: 'oidc' }] })
  const unknown = await call(app, 'listLoginProviders', {}, { query: { tenantCode: 'no-such-tenant' } })
  t.same(unknown.data, { items: [] })
  t.equal((await call(app, 'listLoginProviders', {}, unchecked({ query: {} }))).status, 400)
})
