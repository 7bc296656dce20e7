import t from 'tap'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { federationKit } from '../helpers/federation.js'
import { listeningApp } from '../helpers/oidc.js'
import { startUpstream } from '../helpers/upstream.js'

// A service served below a path (PUBLIC_URL `http://host/auth`, a proxy that strips `/auth`): the flow's
// cookie must be set for the path the browser sees, and the code exchange must name the callback URL the
// provider was given. Both went wrong before: the cookie was set for `/t/...` and never came back.

const proxy = createServer()
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
const origin = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
const publicUrl = `${origin}/auth`
const { app, base: direct } = await listeningApp(t, {
  OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
  PUBLIC_URL: publicUrl,
})
const target = new URL(direct)
proxy.on('request', (req, res) => {
  if (!req.url?.startsWith('/auth/')) {
    res.writeHead(404).end()
    return
  }
  const upstream = request(
    {
      host: target.hostname,
      port: target.port,
      path: req.url.slice('/auth'.length),
      method: req.method,
      headers: req.headers,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    },
  )
  req.pipe(upstream)
})
t.teardown(() => {
  proxy.closeAllConnections()
  proxy.close()
})

const tenant = await createTenant(app)
const upstream = await startUpstream(t, {
  redirectUris: [`${publicUrl}/t/${tenant.code}/federation/callback`],
})
const admin = { token: await tokenFor(app, await createUser(app, tenant, { roles: ['admin'] })) }
const kit = federationKit(
  { app, base: publicUrl, tenant, admin, returnTo: `${publicUrl}/console/sign-in` },
  upstream,
)

t.test('federationAuthorize, federationCallback: a service below a path signs a person in', async (t) => {
  const provider = await kit.addProvider({ allowSignup: true })
  const flow = await kit.federate(upstream, provider.id, {
    person: { sub: 'p-below', email: 'below@acme.test', email_verified: true },
  })
  const code = flow.fragment?.get('login_code') ?? null
  t.ok(code, `a login code: ${String(flow.fragment)}`)
  const res = await kit.login(code, flow.verifier)
  t.equal(res.status, 200, res.raw)
  t.equal(res.data.user.email, 'below@acme.test')
})
