import t from 'tap'
import { randomUUID } from 'node:crypto'
import { routes } from '../../generated/routes.js'
import type { RouteSpec } from '../../src/lib/route-spec.js'
import { signJwt } from '../../src/lib/jwt.js'
import { buildTestApp, PLATFORM_KEY } from '../helpers/app.js'
import { createKey, createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { insertPublishableKey } from '../../src/modules/publishable-keys/queries.js'

// The gate's and the body parser's answers are one code path for every operation; this sweep asks each
// operation of the document for each of them, so that every declared 400, 401, 403, 413, 415 and 429 is
// answered at least once (scripts/contract-coverage.ts counts them) and in the declared shape (the
// contract guard checks every response).
const specs = Object.values(routes) as RouteSpec[]
const declares = (spec: RouteSpec, status: number) => String(status) in (spec.schema.response ?? {})
const urlOf = (spec: RouteSpec) => spec.url.replace(/:[A-Za-z]+/g, () => randomUUID())
let ipCounter = 0
const nextIp = () => `10.77.${Math.floor(++ipCounter / 250)}.${(ipCounter % 250) + 1}`

t.test('every operation: the gate and the body parser answer as the document declares', async (t) => {
  const app = await buildTestApp(t, { METRICS_TOKEN: 'sweep-metrics-token-0123456789' })
  const tenant = await createTenant(app)
  const nobody = await tokenFor(app, await createUser(app, tenant, { roles: ['user'] }))
  const admin = await tokenFor(app, await createUser(app, tenant, { roles: ['admin'] }))
  const fenced = await createKey(app, tenant, ['users:read'], { ipAllowlist: ['192.0.2.0/24'] })
  // A publishable key (contract section 20): the credential of the two sign-up operations, and a
  // `pk_` value that every other operation refuses with 401.
  const publishable = 'pk_' + 's'.repeat(43)
  await insertPublishableKey(app.ctx.dbs.main, {
    tenantId: tenant.id,
    name: 'sweep',
    key: publishable,
    allowedOrigins: ['https://sweep.example.test'],
    defaultRoles: [],
    signupsPerHour: 100,
  })
  const strongest = (spec: RouteSpec): Record<string, string> =>
    spec.auth === 'publishable-key'
      ? { 'x-publishable-key': publishable, origin: 'https://sweep.example.test' }
      : spec.auth === 'jwt'
        ? { authorization: `Bearer ${admin}` }
        : spec.auth === 'metrics'
          ? { authorization: 'Bearer sweep-metrics-token-0123456789' }
          : spec.auth === 'jwt-or-key'
            ? { 'x-client-key': PLATFORM_KEY }
            : {}
  const send = (
    spec: RouteSpec,
    opts: { headers?: Record<string, string>; payload?: string; url?: string },
  ) =>
    app.inject({
      method: spec.method,
      url: opts.url ?? urlOf(spec),
      remoteAddress: nextIp(),
      headers: opts.headers,
      payload: opts.payload,
    })

  let pkTurn = 0
  for (const spec of specs) {
    const op = spec.operationId
    if (spec.auth !== 'public' && declares(spec, 401)) {
      const res = await send(spec, {})
      t.equal(res.statusCode, 401, `${op}: 401 without a credential`)
    }
    if ((spec.auth === 'jwt' || spec.auth === 'jwt-or-key') && declares(spec, 401)) {
      // A publishable key is public: on any operation but the two sign-up ones it is no credential,
      // whichever header carries it (one per operation, in turn, to keep the sweep short).
      const carriers: Record<string, string>[] = [
        { authorization: `Bearer ${publishable}` },
        { 'x-client-key': publishable },
        { 'x-publishable-key': publishable },
      ]
      const headers = carriers[++pkTurn % carriers.length] ?? {}
      const res = await send(spec, { headers })
      t.equal(res.statusCode, 401, `${op}: 401 for a publishable key (${Object.keys(headers).join()})`)
    }
    if (spec.permission && declares(spec, 403)) {
      const res = await send(spec, { headers: { authorization: `Bearer ${nobody}` } })
      t.equal(res.statusCode, 403, `${op}: 403 for a token without ${spec.permission}`)
    }
    if (spec.auth === 'jwt-or-key' && declares(spec, 403)) {
      const res = await send(spec, { headers: { 'x-client-key': fenced.value } })
      t.equal(res.statusCode, 403, `${op}: 403 for a key used outside its IP allowlist`)
    }
    const auth = strongest(spec)
    // A protocol endpoint's query and body are the library's (x-protocol): its 400s are the RFC's, tested
    // with real clients in test/oidc/.
    if (declares(spec, 400) && !spec.protocol) {
      // Past the gate with the strongest credential the operation takes, then refused by validation:
      // nothing reaches a handler.
      const res = await send(spec, { url: `${urlOf(spec)}?sweep-unknown=1`, headers: auth })
      t.equal(res.statusCode, 400, `${op}: 400 for a query parameter it does not take`)
    }
    if (declares(spec, 415)) {
      const res = await send(spec, { headers: { ...auth, 'content-type': 'text/plain' }, payload: 'x' })
      t.equal(res.statusCode, 415, `${op}: 415 for a text body`)
    }
    if (declares(spec, 413)) {
      const big = JSON.stringify({ filler: 'x'.repeat(70 * 1024) })
      const res = await send(spec, { headers: { ...auth, 'content-type': 'application/json' }, payload: big })
      t.equal(res.statusCode, 413, `${op}: 413 for a body over 64 KiB`)
    }
    if (declares(spec, 429)) {
      const ip = nextIp()
      const budget = (spec.rateLimit || null)?.max ?? 100
      let last = 0
      for (let i = 0; i <= budget; i++) {
        // No credential: the budget is spent before the credential is judged, and no handler runs.
        last = (await app.inject({ method: spec.method, url: urlOf(spec), remoteAddress: ip })).statusCode
      }
      t.equal(last, 429, `${op}: 429 once the per-IP budget of ${budget} is spent`)
    }
  }
})

/** The required query of the operations that take one, so that the sweep reaches their handler. */
const QUERIES: Record<string, string> = {
  listLoginProviders: '?tenantCode=sweep',
  getLoginBranding: '?tenantCode=sweep',
  federationAuthorize: `?${new URLSearchParams({
    return_to: 'http://127.0.0.1:3000/console/',
    code_challenge: 'A'.repeat(43),
    code_challenge_method: 'S256',
  })}`,
  federationCallback: '?state=sweep-state',
}

/** A well-formed token of a tenant no cache has seen: verifying it needs the database. */
function jwtOfUnknownTenant(): string {
  const iat = Math.floor(Date.now() / 1000)
  const tenantId = randomUUID()
  const claims = { sub: tenantId, userId: tenantId, tenantId, sid: tenantId, roles: [], permissions: [] }
  return signJwt({ ...claims, iat, exp: iat + 600 }, 'sweep-secret-0123456789abcdef0123456789', 'k1')
}

/** An assertion shaped as a browser sends one (its bytes are never checked: the tenant lookup fails first). */
function passkeyAssertion() {
  const b64 = (n: number) => 'A'.repeat(n)
  return {
    id: b64(22),
    rawId: b64(22),
    type: 'public-key',
    clientExtensionResults: {},
    response: { clientDataJSON: b64(120), authenticatorData: b64(50), signature: b64(96) },
  }
}

t.test('every operation: 503 SERVICE_UNAVAILABLE while the database does not answer', async (t) => {
  const app = await buildTestApp(t, { METRICS_TOKEN: 'sweep-metrics-token-0123456789' })
  // Closing the main database (not the app) is what an outage looks like to a request: every query
  // fails to reach it. The credential caches are cold for an unknown key, so the gate needs it too.
  await app.ctx.dbs.main.destroy()
  for (const spec of specs.filter((s) => declares(s, 503))) {
    const headers: Record<string, string> =
      spec.auth === 'metrics'
        ? { authorization: 'Bearer sweep-metrics-token-0123456789' }
        : spec.auth === 'public'
          ? {}
          : spec.auth === 'jwt'
            ? { authorization: `Bearer ${jwtOfUnknownTenant()}` }
            : spec.auth === 'publishable-key'
              ? { 'x-publishable-key': 'pk_' + 'q'.repeat(43), origin: 'https://sweep.example.test' }
              : { 'x-client-key': 'ck_' + 'q'.repeat(43) }
    const body =
      spec.operationId === 'login'
        ? { tenantCode: 'sweep', identifier: 'a@b.test', password: 'Sweep-pass-1' }
        : spec.operationId === 'refresh'
          ? { refreshToken: 'A'.repeat(64) }
          : spec.operationId === 'verifyLoginOtp'
            ? { mfaToken: 'A'.repeat(64), code: '123456' }
            : spec.operationId === 'setupLoginOtp'
              ? { mfaToken: 'A'.repeat(64) }
              : spec.operationId === 'getPasskeyLoginOptions'
                ? { tenantCode: 'sweep' }
                : spec.operationId === 'loginWithPasskey'
                  ? { tenantCode: 'sweep', response: passkeyAssertion() }
                  : spec.operationId === 'loginFederated'
                    ? { tenantCode: 'sweep', code: 'sweep-code', codeVerifier: 'A'.repeat(43) }
                    : undefined
    const res = await app.inject({
      method: spec.method,
      url: urlOf(spec) + (QUERIES[spec.operationId] ?? ''),
      remoteAddress: nextIp(),
      headers,
      ...(body ? { payload: body } : {}),
    })
    t.not(res.statusCode, 500, `${spec.operationId}: ${res.statusCode}, never 500`)
    if (spec.operationId === 'getPasskeyLoginOptions' || spec.operationId === 'loginWithPasskey')
      t.equal(res.statusCode, 503, `${spec.operationId}: 503 before any passkey check`)
  }
})
