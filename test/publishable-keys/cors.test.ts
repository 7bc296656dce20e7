import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import { freshIp } from '../helpers/fixtures.js'
import { ORIGIN, OTHER_ORIGIN, PK_ENV, pk, signupWith, tenantWithKey } from './support.js'

// CORS of the sign-up operations (contract section 20): the preflight is answered for the keys' own
// origins only, whatever CORS_ORIGINS says, and every answer that depends on Origin says so (Vary).

const CONSOLE = 'https://console.example.test'

const preflight = (
  app: Awaited<ReturnType<typeof buildTestApp>>,
  url: string,
  origin: string,
  method: string,
) =>
  app.inject({
    method: 'OPTIONS',
    url,
    remoteAddress: freshIp(),
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'x-publishable-key,content-type',
    },
  })

t.test('signup: the preflight and CORS headers, with CORS_ORIGINS set to another origin', async (t) => {
  const app = await buildTestApp(t, { ...PK_ENV, CORS_ORIGINS: CONSOLE })

  t.test(
    'signup: preflight from an allowed origin: 204 with the key headers allowed, Vary: Origin',
    async (t) => {
      await tenantWithKey(app)
      for (const [url, method] of [
        ['/api/v1/signup', 'POST'],
        ['/api/v1/signup/challenge', 'GET'],
      ] as const) {
        const res = await preflight(app, url, ORIGIN, method)
        t.equal(res.statusCode, 204, url)
        t.equal(res.headers['access-control-allow-origin'], ORIGIN)
        t.match(String(res.headers['access-control-allow-headers']), /X-Publishable-Key/)
        t.match(String(res.headers['access-control-allow-headers']), /Content-Type/)
        t.equal(res.headers['access-control-allow-methods'], method)
        t.match(String(res.headers.vary), /Origin/)
      }
    },
  )

  t.test(
    'signup: preflight from a foreign origin, or CORS_ORIGINS’ own, is refused without CORS headers',
    async (t) => {
      await tenantWithKey(app)
      for (const origin of [OTHER_ORIGIN, CONSOLE]) {
        const res = await preflight(app, '/api/v1/signup', origin, 'POST')
        t.equal(res.statusCode, 403, origin)
        t.equal(res.headers['access-control-allow-origin'], undefined)
        t.match(String(res.headers.vary), /Origin/)
      }
    },
  )

  t.test('signup: a revoked key’s origin is no longer answered', async (t) => {
    const origin = 'https://revoked.example.test'
    const { admin, key } = await tenantWithKey(app, { allowedOrigins: [origin] })
    t.equal((await preflight(app, '/api/v1/signup', origin, 'POST')).statusCode, 204)
    await call(app, 'revokePublishableKey', admin.cred, { params: { id: key.id } })
    t.equal((await preflight(app, '/api/v1/signup', origin, 'POST')).statusCode, 403)
  })

  t.test('signup: the answer carries Access-Control-Allow-Origin for the key’s origin only', async (t) => {
    const { key } = await tenantWithKey(app)
    const ok = await signupWith(app, key.key, { email: 'cors@example.test', password: 'Signup-pass-1' })
    t.equal(ok.status, 201)
    t.equal(ok.headers['access-control-allow-origin'], ORIGIN)
    t.match(String(ok.headers['access-control-expose-headers']), /Retry-After/)
    const refused = await call(app, 'getSignupChallenge', pk(key.key, CONSOLE))
    t.equal(refused.status, 403)
    t.equal(refused.headers['access-control-allow-origin'], undefined, 'CORS_ORIGINS does not open sign-up')
    t.equal(refused.headers.vary, 'Origin')
  })

  t.test('getSignupChallenge: other routes keep CORS_ORIGINS', async (t) => {
    const res = await call(app, 'getHealth', { headers: { origin: CONSOLE } })
    t.equal(res.headers['access-control-allow-origin'], CONSOLE)
    const pre = await preflight(app, '/api/v1/users', CONSOLE, 'GET')
    t.equal(pre.statusCode, 204)
  })
})
