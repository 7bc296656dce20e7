import t from 'tap'
import { auditRows, createTenant, createUser, userWithToken, waitFor } from '../helpers/fixtures.js'
import { call } from '../helpers/call.js'
import { client, discover, listeningApp, registerClient, signIn, startFlow } from '../helpers/oidc.js'

// exchangeOidcToken's audit and metric (contract section 23, "Audit and metrics"): every call writes one
// OAUTH_TOKEN row with { clientId, grantType }, failures included, and counts in tessera_oauth_tokens_total.

t.test(
  'exchangeOidcToken: one OAUTH_TOKEN row per call, and the counter, with no secret anywhere',
  async (t) => {
    const { app, base } = await listeningApp(t, { METRICS_TOKEN: 'oidc-metrics-token-0123456789' })
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant, { roles: ['user'] })
    const conf = await registerClient(app, tenant)
    const config = await discover(base, tenant, conf.clientId, conf.clientSecret)
    const flow = await startFlow(base, config, { scope: 'openid offline_access' })
    const tokens = await client.authorizationCodeGrant(config, await signIn(app, flow, user), {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
    })
    const bad = await fetch(`${base}/t/${tenant.code}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: 'not-a-token',
        client_id: conf.clientId,
        client_secret: 'wrong',
      }).toString(),
    })
    t.equal(bad.status, 401)
    // Why a wait: the row is written once the answer has gone (an onResponse hook sees the library's answer).
    await waitFor(async () => (await auditRows(app, tenant.id, 'OAUTH_TOKEN')).length >= 2)
    const rows = await auditRows(app, tenant.id, 'OAUTH_TOKEN')
    // Why sorted: each row is written after its own answer, so two calls' rows may land in either order.
    t.same(
      rows
        .map((r) => [r.success, r.metadata.grantType, r.metadata.clientId])
        .sort((a, b) => String(a[1]).localeCompare(String(b[1]))),
      [
        [true, 'authorization_code', conf.clientId],
        [false, 'refresh_token', conf.clientId],
      ],
    )
    const all = JSON.stringify(rows)
    for (const secret of [
      conf.clientSecret ?? '',
      tokens.access_token,
      tokens.refresh_token ?? '',
      flow.verifier,
    ])
      t.notMatch(all, secret, 'no secret, token or verifier in the rows')
    const metrics = await fetch(`${base}/metrics`, {
      headers: { authorization: 'Bearer oidc-metrics-token-0123456789' },
    })
    const text = await metrics.text()
    t.match(text, /tessera_oauth_tokens_total\{grant_type="authorization_code",result="issued"\} 1/)
    t.match(text, /tessera_oauth_tokens_total\{grant_type="refresh_token",result="unauthorized"\} 1/)

    // A client_id with control characters and past 64 characters, and a grant of no kind: the row keeps the
    // id's first 64 characters without them, and `other`; listAuthLogs answers it as the document says.
    const odd = await fetch(`${base}/t/${tenant.code}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'urn:example:odd',
        client_id: `a\u0001b\u007f${'c'.repeat(80)}`,
      }).toString(),
    })
    t.equal(odd.status >= 400, true)
    await waitFor(async () => (await auditRows(app, tenant.id, 'OAUTH_TOKEN')).length >= 3)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const listed = await call(app, 'listAuthLogs', admin.cred, { query: { action: 'OAUTH_TOKEN' } })
    t.equal(listed.status, 200, listed.raw)
    t.match(listed.data.items.find((r) => r.metadata.grantType === 'other')?.metadata, {
      grantType: 'other',
      clientId: `ab${'c'.repeat(62)}`,
    })
  },
)
