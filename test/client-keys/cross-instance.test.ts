import t from 'tap'
import { defaultBackend } from '../helpers/db.js'
import { createTenant, createUser, tokenFor, waitFor } from '../helpers/fixtures.js'
import { twoInstances } from '../helpers/app.js'
import { call, newClientKey } from '../helpers/call.js'

// Contract sections 8 and 11: a revocation bites on the revoking instance at once and on every other
// within 5 seconds. Two instances need one shared database, so this runs on PostgreSQL only.
const skip =
  defaultBackend() !== 'postgres' &&
  'needs TEST_BACKEND=postgres: two PGlite instances cannot share a database'

t.test('two instances on one database', { skip }, async (t) => {
  const { one, two } = await twoInstances(t)
  const tenant = await createTenant(one)
  const admin = await createUser(one, tenant, { roles: ['admin'] })
  const jwt = await tokenFor(one, admin)
  const probe = (app: typeof one, key: string) =>
    call(app, 'listTenantClientKeys', { key }).then((r) => r.status)

  t.test('a revocation on one instance is refused on the other within 5 s', async (t) => {
    const delays: number[] = []
    for (let i = 0; i < 5; i++) {
      const k = await newClientKey(one, { token: jwt }, { name: `k${i}`, scopes: ['client-keys:read'] })
      t.equal(await probe(two, k.key), 200, 'the other instance has the key cached as valid')
      // Spread the revocations over the other instance's cache lifetime (2 s).
      await new Promise((r) => setTimeout(r, i * 400))
      t.equal((await call(one, 'revokeClientKey', { token: jwt }, { params: { id: k.id } })).status, 200)
      t.equal(await probe(one, k.key), 401, 'refused at once on the revoking instance')
      const delay = await waitFor(async () => (await probe(two, k.key)) === 401, 6000, 20)
      t.ok(delay >= 0 && delay < 5000, `refused on the other instance after ${delay} ms`)
      delays.push(delay)
    }
    t.comment(`cross-instance revocation delay (ms): ${delays.join(', ')}; max ${Math.max(...delays)}`)
  })

  t.test('a narrowed allowlist bites on the other instance within 5 s too', async (t) => {
    const k = (
      await call(
        one,
        'createClientKey',
        { token: jwt },
        { body: { name: 'ip', scopes: ['client-keys:read'] } },
      )
    ).body.data
    t.equal(await probe(two, k.key), 200)
    await call(
      one,
      'updateClientKey',
      { token: jwt },
      { params: { id: k.id }, body: { ipAllowlist: ['192.0.2.0/24'] } },
    )
    const delay = await waitFor(async () => (await probe(two, k.key)) === 403, 6000, 20)
    t.ok(delay >= 0 && delay < 5000, `after ${delay} ms`)
  })

  t.test("both instances' usage rows are visible from either within 2 s", async (t) => {
    const k = (
      await call(
        one,
        'createClientKey',
        { token: jwt },
        { body: { name: 'u', scopes: ['client-keys:read'] } },
      )
    ).body.data
    await probe(one, k.key)
    await probe(two, k.key)
    await probe(two, k.key)
    const seen = await waitFor(
      async () =>
        (await call(one, 'getClientKeyStats', { token: jwt }, { params: { id: k.id } })).body.data
          .totalRequests === 3,
      2000,
      25,
    )
    t.ok(seen >= 0, `seen after ${seen} ms`)
  })
})
