import t from 'tap'
import { auditRows, createTenant, createUser, waitFor } from '../helpers/fixtures.js'
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
  },
)
