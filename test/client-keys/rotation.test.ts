import t from 'tap'
import { createManualClock } from '../../src/lib/clock.js'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, createUser, KEY_SHAPE, tokenFor } from '../helpers/fixtures.js'
import { call } from '../helpers/call.js'

// rotateClientKey (openapi/paths/client-keys.yaml, an extension): a new value, the old one honoured for
// the grace period only.
const clock = createManualClock()
const app = await buildTestApp(t, {}, { clock })
const tenant = await createTenant(app)
const admin = await createUser(app, tenant, { roles: ['admin'] })
const jwt = await tokenFor(app, admin, 86_400)
// Why a new token per rotation: rotating needs a sign-in of the last 600 s (contract section 26), and the
// manual clock runs past that; the other calls take the day-long `jwt`.
const signedIn = async () => ({ token: await tokenFor(app, admin, 86_400) })
const probe = (key: string) => call(app, 'listTenantClientKeys', { key }).then((r) => r.status)

/** A new key, created with a token of a fresh sign-in: the manual clock runs past 600 s (section 22). */
async function newKey() {
  const fresh = await tokenFor(app, admin, 86_400)
  const r = await call(
    app,
    'createClientKey',
    { token: fresh },
    { body: { name: 'rotating', scopes: ['client-keys:read'] } },
  )
  return r.body.data as { id: string; key: string; prefix: string }
}

t.test(
  'rotateClientKey: 200 without grace, the new value works, the old one is refused at once',
  async (t) => {
    const k = await newKey()
    t.equal(await probe(k.key), 200, 'old value cached as valid')
    const r = await call(app, 'rotateClientKey', await signedIn(), { params: { id: k.id } })
    t.equal(r.status, 200)
    const rotated = r.body.data
    t.match(rotated.key, KEY_SHAPE)
    t.not(rotated.key, k.key)
    t.equal(rotated.prefix, rotated.key.slice(0, 12))
    t.equal(rotated.id, k.id)
    t.equal(rotated.status, 'ACTIVE')
    t.equal(await probe(k.key), 401)
    t.equal(await probe(rotated.key), 200)
    const shown = await call(app, 'getClientKey', { token: jwt }, { params: { id: k.id } })
    t.equal(shown.body.data.prefix, rotated.prefix)
    t.notMatch(shown.raw, rotated.key)
  },
)

t.test('rotateClientKey: 200 with grace, the old value works until the grace ends', async (t) => {
  const k = await newKey()
  const r = await call(app, 'rotateClientKey', await signedIn(), {
    params: { id: k.id },
    body: { gracePeriodSeconds: 3600 },
  })
  t.equal(r.status, 200)
  const fresh = r.body.data.key
  t.equal(await probe(k.key), 200, 'old value inside the grace')
  t.equal(await probe(fresh), 200)
  clock.advance(3_599_000)
  t.equal(await probe(k.key), 200, 'one second before the end')
  clock.advance(1_000)
  t.equal(await probe(k.key), 401, 'at the end of the grace')
  t.equal(await probe(fresh), 200)
})

/** Rotates the key with a grace of 600 seconds; returns the new value. */
const rotate600 = async (id: string): Promise<string> =>
  (
    await call(app, 'rotateClientKey', await signedIn(), {
      params: { id },
      body: { gracePeriodSeconds: 600 },
    })
  ).data.key

t.test('rotateClientKey: a second rotation keeps only the value it replaced', async (t) => {
  const k = await newKey()
  const second = await rotate600(k.id)
  const third = await rotate600(k.id)
  t.equal(await probe(k.key), 401, 'the first value')
  t.equal(await probe(second), 200, 'the value just replaced, inside its grace')
  t.equal(await probe(third), 200)
})

t.test('rotateClientKey: revoking ends the grace too', async (t) => {
  const k = await newKey()
  const fresh = await rotate600(k.id)
  await call(app, 'revokeClientKey', { token: jwt }, { params: { id: k.id } })
  t.equal(await probe(k.key), 401)
  t.equal(await probe(fresh), 401)
})

t.test('rotateClientKey: 400 VALIDATION_ERROR', async (t) => {
  const k = await newKey()
  for (const payload of [{ gracePeriodSeconds: 604_801 }, { gracePeriodSeconds: -1 }, { grace: 5 }]) {
    const r = await call(app, 'rotateClientKey', await signedIn(), { params: { id: k.id }, body: payload })
    t.equal(r.status, 400, JSON.stringify(payload))
    t.equal(r.body.code, 'VALIDATION_ERROR')
  }
  t.equal(await probe(k.key), 200, 'nothing rotated')
  const max = await call(app, 'rotateClientKey', await signedIn(), {
    params: { id: k.id },
    body: { gracePeriodSeconds: 604_800 },
  })
  t.equal(max.status, 200, 'seven days is allowed')
})

t.test("rotateClientKey: 404 CLIENT_KEY_NOT_FOUND for another tenant's key", async (t) => {
  const k = await newKey()
  const other = await createTenant(app)
  const otherAdmin = await createUser(app, other, { roles: ['admin'] })
  const r = await call(
    app,
    'rotateClientKey',
    { token: await tokenFor(app, otherAdmin) },
    { params: { id: k.id } },
  )
  t.equal(r.status, 404)
  t.equal(r.body.code, 'CLIENT_KEY_NOT_FOUND')
})

t.test('rotateClientKey: 403 FORBIDDEN without client-keys:update', async (t) => {
  const k = await newKey()
  const reader = await createUser(app, tenant, { permissions: ['client-keys:read'] })
  const r = await call(
    app,
    'rotateClientKey',
    { token: await tokenFor(app, reader) },
    { params: { id: k.id } },
  )
  t.equal(r.status, 403)
  t.equal(r.body.code, 'FORBIDDEN')
})
