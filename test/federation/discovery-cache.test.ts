import t from 'tap'
import { freshnessMs } from '../../src/lib/cacheable.js'
import { createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { federationKit } from '../helpers/federation.js'
import { listeningApp } from '../helpers/oidc.js'
import { startUpstream } from '../helpers/upstream.js'

// A provider's discovery document is kept as its own Cache-Control says (issue 46: "cache discovery and JWKS
// documents with their HTTP caching"): a flow's start reads it again only when it is stale. Counted at a real
// upstream on loopback.

const { app, base } = await listeningApp(t, { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' })
const tenant = await createTenant(app)
const admin = { token: await tokenFor(app, await createUser(app, tenant, { roles: ['admin'] })) }
const callback = `${base}/t/${tenant.code}/federation/callback`

/** Discovery reads by three flow starts (and the provider's creation) at an upstream sending this header. */
let run = 0
async function readsWith(cacheControl: string | undefined) {
  run++
  const upstream = await startUpstream(t, { redirectUris: [callback] })
  upstream.discoveryCacheControl = cacheControl
  const kit = federationKit({ app, base, tenant, admin, returnTo: `${base}/console/sign-in` }, upstream)
  const provider = await kit.addProvider({ allowSignup: true })
  const created = upstream.discoveryReads
  for (let i = 0; i < 3; i++) {
    const flow = await kit.federate(upstream, provider.id, {
      person: { sub: `p-${run}-${i}`, email: `cache-${run}-${i}@acme.test`, email_verified: true },
    })
    if (!flow.fragment?.get('login_code')) throw new Error(`flow ${i}: ${String(flow.fragment)}`)
  }
  return upstream.discoveryReads - created
}

t.test('federationAuthorize: the discovery document is kept as its Cache-Control says', async (t) => {
  t.equal(await readsWith(undefined), 1, 'no header: read once, kept (ten minutes)')
  t.equal(await readsWith('public, max-age=3600'), 1, 'max-age=3600: read once')
  t.equal(
    await readsWith('no-store'),
    6,
    'no-store: read at each use, the start and the callback of every flow',
  )
  t.equal(await readsWith('max-age=0'), 6, 'max-age=0: the same')
})

t.test('freshnessMs: RFC 9111 directives, held within a minute and a day', async (t) => {
  t.equal(freshnessMs(null, 5), 5, 'nothing said: the fallback')
  t.equal(freshnessMs('public', 5), 5, 'no max-age: the fallback')
  t.equal(freshnessMs('no-cache', 5), 0)
  t.equal(freshnessMs('Max-Age=120, public', 5), 120_000, 'case and order do not matter')
  t.equal(freshnessMs('max-age=1', 5), 60_000, 'at least a minute')
  t.equal(freshnessMs('max-age=99999999', 5), 24 * 3600_000, 'at most a day')
  t.equal(freshnessMs('max-age=abc', 5), 5, 'an unreadable max-age: the fallback')
})
