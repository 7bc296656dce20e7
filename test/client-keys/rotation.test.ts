import t from 'tap'
import { createManualClock } from '../../src/lib/clock.js'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { call, KEY_SHAPE } from './fixtures/support.js'

// POST /client-keys/:id/rotate (contract section 8, extension): a new value, the old one honoured for
// the grace period only.
const clock = createManualClock()
const app = await buildTestApp(t, {}, { clock })
const tenant = await createTenant(app)
const admin = await createUser(app, tenant, { roles: ['admin'] })
const jwt = await tokenFor(app, admin, 86_400)
const base = '/api/v1/client-keys'
const probe = (key: string) => call(app, 'GET', `${base}/tenant`, { key }).then((r) => r.status)

async function newKey() {
  const r = await call(app, 'POST', base, {
    jwt,
    payload: { name: 'rotating', scopes: ['client-keys:read'] },
  })
  return r.body.data as { id: string; key: string; prefix: string }
}

t.test('200 without grace: the new value works, the old one is refused at once', async (t) => {
  const k = await newKey()
  t.equal(await probe(k.key), 200, 'old value cached as valid')
  const r = await call(app, 'POST', `${base}/${k.id}/rotate`, { jwt })
  t.equal(r.status, 200)
  const rotated = r.body.data
  t.match(rotated.key, KEY_SHAPE)
  t.not(rotated.key, k.key)
  t.equal(rotated.prefix, rotated.key.slice(0, 12))
  t.equal(rotated.id, k.id)
  t.equal(rotated.status, 'ACTIVE')
  t.equal(await probe(k.key), 401)
  t.equal(await probe(rotated.key), 200)
  const shown = await call(app, 'GET', `${base}/${k.id}`, { jwt })
  t.equal(shown.body.data.prefix, rotated.prefix)
  t.notMatch(shown.raw, rotated.key)
})

t.test('200 with grace: the old value works until the grace ends', async (t) => {
  const k = await newKey()
  const r = await call(app, 'POST', `${base}/${k.id}/rotate`, { jwt, payload: { gracePeriodSeconds: 3600 } })
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

t.test('a second rotation keeps only the value it replaced', async (t) => {
  const k = await newKey()
  const second = (
    await call(app, 'POST', `${base}/${k.id}/rotate`, { jwt, payload: { gracePeriodSeconds: 600 } })
  ).body.data.key
  const third = (
    await call(app, 'POST', `${base}/${k.id}/rotate`, { jwt, payload: { gracePeriodSeconds: 600 } })
  ).body.data.key
  t.equal(await probe(k.key), 401, 'the first value')
  t.equal(await probe(second), 200, 'the value just replaced, inside its grace')
  t.equal(await probe(third), 200)
})

t.test('revoking ends the grace too', async (t) => {
  const k = await newKey()
  const fresh = (
    await call(app, 'POST', `${base}/${k.id}/rotate`, { jwt, payload: { gracePeriodSeconds: 600 } })
  ).body.data.key
  await call(app, 'POST', `${base}/${k.id}/revoke`, { jwt })
  t.equal(await probe(k.key), 401)
  t.equal(await probe(fresh), 401)
})

t.test('400 VALIDATION_ERROR', async (t) => {
  const k = await newKey()
  for (const payload of [{ gracePeriodSeconds: 604_801 }, { gracePeriodSeconds: -1 }, { grace: 5 }]) {
    const r = await call(app, 'POST', `${base}/${k.id}/rotate`, { jwt, payload })
    t.equal(r.status, 400, JSON.stringify(payload))
    t.equal(r.body.code, 'VALIDATION_ERROR')
  }
  t.equal(await probe(k.key), 200, 'nothing rotated')
  const max = await call(app, 'POST', `${base}/${k.id}/rotate`, {
    jwt,
    payload: { gracePeriodSeconds: 604_800 },
  })
  t.equal(max.status, 200, 'seven days is allowed')
})

t.test("404 CLIENT_KEY_NOT_FOUND for another tenant's key", async (t) => {
  const k = await newKey()
  const other = await createTenant(app)
  const otherAdmin = await createUser(app, other, { roles: ['admin'] })
  const r = await call(app, 'POST', `${base}/${k.id}/rotate`, { jwt: await tokenFor(app, otherAdmin) })
  t.equal(r.status, 404)
  t.equal(r.body.code, 'CLIENT_KEY_NOT_FOUND')
})

t.test('403 FORBIDDEN without client-keys:update', async (t) => {
  const k = await newKey()
  const reader = await createUser(app, tenant, { permissions: ['client-keys:read'] })
  const r = await call(app, 'POST', `${base}/${k.id}/rotate`, { jwt: await tokenFor(app, reader) })
  t.equal(r.status, 403)
  t.equal(r.body.code, 'FORBIDDEN')
})
