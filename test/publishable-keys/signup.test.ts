import t from 'tap'
import { createManualClock } from '../../src/lib/clock.js'
import { challengeHmacKey, issueChallenge } from '../../src/modules/publishable-keys/challenge.js'
import { buildTestApp } from '../helpers/app.js'
import { call, unchecked } from '../helpers/call.js'
import { auditRows, createTenant, freshIp } from '../helpers/fixtures.js'
import {
  ORIGIN,
  OTHER_ORIGIN,
  PK_ENV,
  pk,
  signupWith,
  solve,
  solvedChallenge,
  tenantWithKey,
} from './support.js'

// POST /signup and GET /signup/challenge (contract section 20): success, every declared refusal, the
// replay of one solution, isolation between tenants. Budgets: budgets.test.ts; CORS: cors.test.ts.

const PASSWORD = 'Signup-pass-1'

t.test('signup: POST /signup', async (t) => {
  const clock = createManualClock()
  const app = await buildTestApp(t, PK_ENV, { clock })

  t.test(
    '201: the user, with the key’s default roles and emailVerified false; a REGISTER row via the key',
    async (t) => {
      const { tenant, key } = await tenantWithKey(app, { defaultRoles: ['user'] })
      const res = await signupWith(app, key.key, { email: 'Ana@Example.test', password: PASSWORD })
      t.equal(res.status, 201, res.raw)
      t.equal(res.data.email, 'ana@example.test')
      t.same(res.data.roles, ['user'])
      t.equal(res.data.emailVerified, false)
      t.equal(res.data.tenantId, tenant.id)
      t.equal(res.headers['access-control-allow-origin'], ORIGIN)
      t.equal(res.headers.vary, 'Origin')
      const row = (await auditRows(app, tenant.id, 'REGISTER')).find((r) => r.user_id === res.data.id)
      t.ok(row?.success)
      t.same(row?.metadata, { via: 'publishable_key', keyId: key.id })
      t.equal(row?.actor_type, null)
      const login = await call(app, 'login', null, {
        body: { tenantCode: tenant.code, identifier: 'ana@example.test', password: PASSWORD },
      })
      t.equal(login.status, 200, 'the new user logs in')
    },
  )

  t.test('201 with no default roles: a user with none', async (t) => {
    const { key } = await tenantWithKey(app)
    const res = await signupWith(app, key.key, { email: 'no-roles@example.test', password: PASSWORD })
    t.equal(res.status, 201)
    t.same(res.data.roles, [])
  })

  t.test('400 VALIDATION_ERROR and PASSWORD_POLICY_VIOLATION, as for register', async (t) => {
    const { key } = await tenantWithKey(app, {}, { passwordPolicy: { requireDigit: true } })
    const noId = await call(app, 'signup', pk(key.key), {
      body: unchecked({ password: PASSWORD, altcha: await solvedChallenge(app, key.key) }),
    })
    t.equal(noId.status, 400)
    t.equal(noId.code, 'VALIDATION_ERROR')
    const weak = await signupWith(app, key.key, { email: 'weak@example.test', password: 'no-digits-here' })
    t.equal(weak.status, 400)
    t.equal(weak.code, 'PASSWORD_POLICY_VIOLATION')
    t.same(weak.body.details, ['requireDigit'])
  })

  t.test(
    '400 INVALID_CHALLENGE: garbage, a wrong number, another key’s, an expired or a used solution',
    async (t) => {
      const { key } = await tenantWithKey(app)
      const other = await tenantWithKey(app)
      const send = (altcha: string, email: string) =>
        call(app, 'signup', pk(key.key), { body: { email, password: PASSWORD, altcha } })
      t.equal((await send('bm90IGpzb24=', 'a1@example.test')).code, 'INVALID_CHALLENGE', 'not a payload')
      const missing = await call(app, 'signup', pk(key.key), {
        body: unchecked({ email: 'a0@example.test', password: PASSWORD }),
      })
      t.equal(missing.status, 400)
      t.equal(missing.code, 'INVALID_CHALLENGE', 'a missing solution (not VALIDATION_ERROR)')
      const bad: [string, string][] = [
        ['', 'an empty solution'],
        ['not base64 at all!', 'a malformed solution'],
      ]
      for (const [altcha, what] of bad) {
        const res = await send(altcha, 'a0@example.test')
        t.equal(res.status, 400, what)
        t.equal(res.code, 'INVALID_CHALLENGE', what)
      }
      const overlong = await send('A'.repeat(5000), 'a0@example.test')
      t.equal(overlong.code, 'VALIDATION_ERROR', 'past the documented 4096 characters: a limit (section 1)')
      const both = await call(app, 'signup', pk(key.key), {
        body: unchecked({ password: PASSWORD, nickname: 'x' }),
      })
      t.equal(
        both.code,
        'VALIDATION_ERROR',
        'a missing proof in a body that is wrong anyway: the body’s error',
      )
      const stranger = await call(app, 'signup', pk('pk_' + 'x'.repeat(43)), {
        body: unchecked({ email: 'a0@example.test', password: PASSWORD }),
      })
      t.equal(stranger.status, 401, 'and after the key: an unknown key is 401 whatever the body')
      const none = await app.ctx.dbs
        .forTenant(key.tenantId)
        .selectFrom('users')
        .select('id')
        .where('tenant_id', '=', key.tenantId)
        .where('email', 'in', ['a0@example.test', 'a1@example.test'])
        .execute()
      t.same(none, [], 'no user written by a refused sign-up')
      const good = await solvedChallenge(app, key.key)
      const decoded = JSON.parse(Buffer.from(good, 'base64').toString()) as { number: number }
      const wrong = Buffer.from(JSON.stringify({ ...decoded, number: decoded.number + 1 })).toString('base64')
      t.equal((await send(wrong, 'a2@example.test')).code, 'INVALID_CHALLENGE', 'a wrong number')
      const foreign = await solvedChallenge(app, other.key.key)
      t.equal((await send(foreign, 'a3@example.test')).code, 'INVALID_CHALLENGE', 'another key’s challenge')
      const forged = await issueChallenge('not-our-key', key.id, 100, clock.now())
      t.equal((await send(solve(forged), 'a4@example.test')).code, 'INVALID_CHALLENGE', 'not signed by us')
      const stale = await solvedChallenge(app, key.key)
      clock.advance(10 * 60 * 1000 + 1000)
      t.equal((await send(stale, 'a5@example.test')).code, 'INVALID_CHALLENGE', 'expired after 10 minutes')
      const fresh = await issueChallenge(challengeHmacKey(app.ctx.secretsKey), key.id, 100, clock.now())
      const once = solve(fresh)
      t.equal((await send(once, 'a6@example.test')).status, 201, 'a fresh one works')
      const used = await send(once, 'a7@example.test')
      t.equal(used.status, 400)
      t.equal(used.code, 'INVALID_CHALLENGE', 'a used solution')
    },
  )

  t.test('replay: one solution posted 10 times concurrently gives exactly one 201', async (t) => {
    const { key } = await tenantWithKey(app)
    const altcha = await solvedChallenge(app, key.key)
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(app, 'signup', pk(key.key), {
          body: { email: `replay${i}@example.test`, password: PASSWORD, altcha },
        }),
      ),
    )
    t.equal(results.filter((r) => r.status === 201).length, 1)
    t.ok(results.filter((r) => r.status !== 201).every((r) => r.code === 'INVALID_CHALLENGE'))
  })

  t.test('401 UNAUTHORIZED: no key, an unknown key, a revoked key', async (t) => {
    const { admin, key } = await tenantWithKey(app)
    const altcha = await solvedChallenge(app, key.key)
    const body = { email: 'u401@example.test', password: PASSWORD, altcha }
    const none = await call(app, 'signup', { headers: { origin: ORIGIN } }, { body })
    t.equal(none.status, 401)
    t.equal(none.code, 'UNAUTHORIZED')
    const unknown = await call(app, 'signup', pk('pk_' + 'u'.repeat(43)), { body })
    t.equal(unknown.code, 'UNAUTHORIZED')
    await call(app, 'revokePublishableKey', admin.cred, { params: { id: key.id } })
    const revoked = await call(app, 'signup', pk(key.key), { body })
    t.equal(revoked.status, 401)
    t.equal(revoked.code, 'UNAUTHORIZED')
    const challenge = await call(app, 'getSignupChallenge', pk(key.key))
    t.equal(challenge.status, 401, 'getSignupChallenge: 401 for a revoked key')
  })

  t.test('403 ORIGIN_NOT_ALLOWED: no Origin, or one outside the key’s list', async (t) => {
    const { key } = await tenantWithKey(app)
    const altcha = await solvedChallenge(app, key.key)
    const body = { email: 'u403@example.test', password: PASSWORD, altcha }
    const none = await call(app, 'signup', pk(key.key, null), { body })
    t.equal(none.status, 403)
    t.equal(none.code, 'ORIGIN_NOT_ALLOWED')
    const foreign = await call(app, 'signup', pk(key.key, OTHER_ORIGIN), { body })
    t.equal(foreign.code, 'ORIGIN_NOT_ALLOWED')
    t.equal(foreign.headers['access-control-allow-origin'], undefined)
    t.equal(foreign.headers.vary, 'Origin')
  })

  t.test('409 USER_ALREADY_EXISTS for an identifier that exists', async (t) => {
    const { key } = await tenantWithKey(app)
    t.equal((await signupWith(app, key.key, { email: 'dup@example.test', password: PASSWORD })).status, 201)
    const again = await signupWith(app, key.key, { email: 'DUP@example.test', password: PASSWORD })
    t.equal(again.status, 409)
    t.equal(again.code, 'USER_ALREADY_EXISTS')
  })

  t.test('isolation: a key of tenant A creates users in tenant A only', async (t) => {
    const a = await tenantWithKey(app)
    const b = await createTenant(app)
    const res = await signupWith(app, a.key.key, { email: 'iso@example.test', password: PASSWORD })
    t.equal(res.data.tenantId, a.tenant.id)
    const inB = await app.ctx.dbs
      .forTenant(b.id)
      .selectFrom('users')
      .select('id')
      .where('tenant_id', '=', b.id)
      .execute()
    t.same(inB, [], 'tenant B has no user')
    const wrongTenant = await call(app, 'signup', pk(a.key.key), {
      body: unchecked({ email: 'x@example.test', password: PASSWORD, altcha: 'x', tenantCode: b.code }),
    })
    t.equal(wrongTenant.status, 400, 'no body field can name another tenant')
  })
})

t.test('getSignupChallenge: GET /signup/challenge', async (t) => {
  const app = await buildTestApp(t, PK_ENV)

  t.test('200 the ALTCHA challenge, expiring in 10 minutes, bound to the key', async (t) => {
    const { key } = await tenantWithKey(app)
    const res = await call(app, 'getSignupChallenge', pk(key.key))
    t.equal(res.status, 200)
    t.equal(res.data.algorithm, 'SHA-256')
    t.equal(res.data.maxnumber, 2000)
    const params = new URLSearchParams(res.data.salt.split('?')[1])
    t.equal(params.get('k'), key.id)
    const expires = Number(params.get('expires')) * 1000
    t.ok(Math.abs(expires - (Date.now() + 600_000)) < 5000)
    t.equal(res.headers.vary, 'Origin')
    t.equal(res.headers['access-control-allow-origin'], ORIGIN)
  })

  t.test('401 without a key; 403 ORIGIN_NOT_ALLOWED without an Origin or from another', async (t) => {
    const { key } = await tenantWithKey(app)
    const none = await call(app, 'getSignupChallenge', { headers: { origin: ORIGIN } })
    t.equal(none.status, 401)
    const noOrigin = await call(app, 'getSignupChallenge', pk(key.key, null))
    t.equal(noOrigin.status, 403)
    t.equal(noOrigin.code, 'ORIGIN_NOT_ALLOWED')
    const foreign = await call(app, 'getSignupChallenge', pk(key.key, OTHER_ORIGIN, freshIp()))
    t.equal(foreign.code, 'ORIGIN_NOT_ALLOWED')
  })
})
