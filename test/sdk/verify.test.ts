import t from 'tap'
import { randomUUID } from 'node:crypto'
import { createTokenVerifier, type TokenVerifierOptions } from '../../clients/typescript/src/index.js'
import { createTestDatabaseUrl, defaultBackend } from '../helpers/db.js'
import {
  bearer,
  call,
  dataOf,
  freePort,
  httpLogin,
  startService,
  stopService,
  waitReady,
} from '../helpers/service-process.js'
import { rejection } from '../helpers/sdk.js'

// The SDK's createTokenVerifier (clients/typescript/src/verify.ts) against the service started as a separate
// process: tokens of EdDSA and ES256 tenants verified offline from the tenant's discovery document and key
// set; every refusal a TesseraError 401 with the code the service itself would answer.

const KEY = 'ck_' + 'V'.repeat(43)
const PASSWORD = 'Sdk-verify-passphrase-1'

/** A fetch that records the paths the verifier asks for, then sends the request. */
function recording(): { paths: string[]; fetch: (request: Request) => Promise<Response> } {
  const paths: string[] = []
  return {
    paths,
    fetch: (request) => {
      paths.push(new URL(request.url).pathname)
      return fetch(request)
    },
  }
}

const kidOf = (token: string) =>
  (JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as { kid: string }).kid

t.test('getJwks: createTokenVerifier against the service over HTTP', async (t) => {
  const database = await createTestDatabaseUrl(defaultBackend())
  // Why the port chosen here: PUBLIC_URL, the issuer's base, must be the address the service answers on.
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const service = await startService({
    DATABASE_URL: database.url,
    PORT: String(port),
    PUBLIC_URL: baseUrl,
    BOOTSTRAP_CLIENT_KEY: KEY,
    JWT_SECRET: 'sdk-verify-default-jwt-secret-0123456789abcdef',
    SECRETS_KEY: 'sdk-verify-secrets-key-0123456789abcdef012',
  })
  t.teardown(async () => {
    await stopService(service)
    await database.drop()
  })
  await waitReady({ ...service, base: baseUrl }, 60_000)

  const login = httpLogin(baseUrl, PASSWORD)

  /** A tenant with a user, through the API; switched to `alg` by its admin unless HS256. */
  async function tenantWith(alg: 'HS256' | 'EdDSA' | 'ES256') {
    const code = `sv${randomUUID().slice(0, 8)}`
    const admin = `admin@${code}.test`
    const email = `ana@${code}.test`
    const tenant = dataOf<{ id: string }>(
      await call(
        baseUrl,
        'POST',
        '/api/v1/tenants',
        { code, name: `Verify ${code}`, admin: { email: admin, password: PASSWORD } },
        { 'x-client-key': KEY },
      ),
      'createTenant',
      201,
    )
    let adminToken = await login(code, admin)
    if (alg !== 'HS256') {
      dataOf(
        await call(
          baseUrl,
          'PATCH',
          `/api/v1/tenants/${tenant.id}/config`,
          { signingAlgorithm: alg },
          bearer(adminToken),
        ),
        'updateTenantConfig',
      )
      adminToken = await login(code, admin)
    }
    const user = dataOf<{ id: string }>(
      await call(baseUrl, 'POST', '/api/v1/register', { email, password: PASSWORD }, bearer(adminToken)),
      'register',
      201,
    )
    return { id: tenant.id, code, adminToken, userId: user.id, token: await login(code, email) }
  }

  const acme = await tenantWith('EdDSA')
  const verifierOf = (code: string, options: Partial<TokenVerifierOptions> = {}) =>
    createTokenVerifier({ baseUrl, tenantCode: code, ...options })

  await t.test('getJwks: verify() resolves to the claims of a fresh EdDSA token', async (t) => {
    // The code as a user types it: the tenant code is case-insensitive, the issuer is the stored one.
    const claims = await verifierOf(acme.code.toUpperCase()).verify(acme.token)
    t.equal(claims.sub, acme.userId)
    t.equal(claims.userId, acme.userId)
    t.equal(claims.tenantId, acme.id)
    t.equal(claims.tenantCode, acme.code)
    t.equal(claims.iss, `${baseUrl}/t/${acme.code}`, 'iss: {PUBLIC_URL}/t/{code}')
    t.ok(claims.exp > Date.now() / 1000)
  })

  await t.test(
    'getJwks: the two documents are fetched once; later verifications make no request',
    async (t) => {
      const rec = recording()
      const verifier = verifierOf(acme.code, { fetch: rec.fetch })
      t.match(await verifier.discovery(), {
        issuer: `${baseUrl}/t/${acme.code}`,
        jwks_uri: `${baseUrl}/t/${acme.code}/.well-known/jwks.json`,
      })
      for (let i = 0; i < 200; i++) await verifier.verify(acme.token)
      t.same(rec.paths, [
        `/t/${acme.code}/.well-known/openid-configuration`,
        `/t/${acme.code}/.well-known/jwks.json`,
      ])
    },
  )

  await t.test('getJwks: an ES256 tenant’s tokens verify too', async (t) => {
    const es = await tenantWith('ES256')
    const header = JSON.parse(Buffer.from(es.token.split('.')[0] ?? '', 'base64url').toString()) as {
      alg: string
    }
    t.equal(header.alg, 'ES256')
    const claims = await verifierOf(es.code).verify(es.token)
    t.equal(claims.sub, es.userId)
    t.equal(claims.iss, `${baseUrl}/t/${es.code}`)
  })

  await t.test(
    'getJwks: a tampered token, another tenant’s, an HS256 one and a non-JWT are 401 UNAUTHORIZED',
    async (t) => {
      const verifier = verifierOf(acme.code, { cooldownMs: 0 })
      const [header, payload, signature] = acme.token.split('.') as [string, string, string]
      const i = Math.floor(payload.length / 2)
      const tampered = [
        header,
        payload.slice(0, i) + (payload[i] === 'A' ? 'B' : 'A') + payload.slice(i + 1),
        signature,
      ].join('.')
      const other = await tenantWith('EdDSA')
      const hs = await tenantWith('HS256')
      const cases: [string, string, string][] = [
        ['one payload character changed', tampered, 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED'],
        ['a token of another EdDSA tenant', other.token, 'ERR_JWKS_NO_MATCHING_KEY'],
        ['a token of an HS256 tenant', hs.token, 'ERR_JOSE_ALG_NOT_ALLOWED'],
        ['not a JWT', 'not-a-token', 'ERR_JWS_INVALID'],
        ['empty', '', 'ERR_JWS_INVALID'],
      ]
      for (const [what, token, cause] of cases) {
        const err = await rejection(verifier.verify(token), 'the token verified')
        t.equal(err.status, 401, `${what}: 401`)
        t.equal(err.code, 'UNAUTHORIZED', `${what}: UNAUTHORIZED`)
        t.equal(err.message, 'Invalid token')
        t.equal(
          (err.cause as { code?: string } | undefined)?.code,
          cause,
          `${what}: jose's ${cause} as the cause`,
        )
      }
      t.equal(
        (await verifierOf(other.code).verify(other.token)).sub,
        other.userId,
        'that tenant’s own verifier accepts its token',
      )
    },
  )

  await t.test('getJwks: a token past its exp is 401 TOKEN_EXPIRED', async (t) => {
    const later = verifierOf(acme.code, { now: () => Date.now() + 3_600_000 })
    const err = await rejection(later.verify(acme.token), 'the token verified')
    t.equal(err.status, 401)
    t.equal(err.code, 'TOKEN_EXPIRED')
    t.equal(err.message, 'Token expired')
    const tolerant = verifierOf(acme.code, { now: () => Date.now() + 3_600_000, clockToleranceSeconds: 7200 })
    t.equal((await tolerant.verify(acme.token)).sub, acme.userId, 'within clockToleranceSeconds it verifies')
  })

  await t.test('getJwks: after a rotation a new token verifies and the former one still does', async (t) => {
    const rec = recording()
    const verifier = verifierOf(acme.code, { fetch: rec.fetch, cooldownMs: 0 })
    await verifier.verify(acme.token)
    const rotated = dataOf<{ kid: string; previous: { kid: string } | null }>(
      await call(
        baseUrl,
        'POST',
        '/api/v1/tenants/me/signing-keys/rotate',
        undefined,
        bearer(acme.adminToken),
      ),
      'rotateSigningKey',
    )
    t.equal(rotated.previous?.kid, kidOf(acme.token))
    const fresh = await login(acme.code, `ana@${acme.code}.test`)
    t.equal(kidOf(fresh), rotated.kid, 'the new token names the new key')
    t.equal((await verifier.verify(fresh)).sub, acme.userId, 'the new token verifies')
    t.equal((await verifier.verify(acme.token)).sub, acme.userId, 'and so does the one signed before')
    t.same(
      rec.paths.filter((p) => p.endsWith('/jwks.json')).length,
      2,
      'the key set was fetched again once, for the unknown kid',
    )
  })

  await t.test(
    'getJwks: an unknown tenant: verify() throws 404 TENANT_NOT_FOUND and asks again next time',
    async (t) => {
      const rec = recording()
      const verifier = verifierOf('nosuchtenant', { fetch: rec.fetch })
      for (let i = 0; i < 2; i++) {
        const err = await rejection(verifier.verify(acme.token), 'the token verified')
        t.equal(err.status, 404)
        t.equal(err.code, 'TENANT_NOT_FOUND', 'the discovery answer, not a verdict on the token')
        t.type(err.requestId, 'string')
      }
      t.equal(rec.paths.length, 2, 'a failed discovery is not kept')
    },
  )
})
