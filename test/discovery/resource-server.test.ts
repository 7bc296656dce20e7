import t from 'tap'
import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
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

// "A resource server needs no code of ours" (contract section 13): the service runs as a separate process
// over HTTP; a minimal Fastify API in this process checks bearer tokens with `jose` alone, configured with
// nothing but the issuer URL: the discovery document names the key set, `createRemoteJWKSet` fetches it,
// `jwtVerify` checks issuer, algorithm, signature and expiry. Everything else goes through the public API.

const KEY = 'ck_' + 'R'.repeat(43)
const PASSWORD = 'Resource-server-passphrase-1'
const ALGORITHMS = ['EdDSA', 'ES256']

interface ResourceServer {
  readonly app: FastifyInstance
  readonly url: string
  readonly issuer: string
  readonly jwks: ReturnType<typeof createRemoteJWKSet>
  /** GET /whoami with this bearer token: the status and body. */
  whoami(token: string): Promise<{ status: number; body: { sub?: string; error?: string } }>
}

/**
 * A resource server as a third party writes it: configured with the issuer URL only. Its discovery
 * document gives the key set; jose does the rest. The cooldown is 0 so a token with an unknown kid (a
 * rotation) fetches the key set again at once (jose's default waits 30 s after the last fetch).
 */
async function resourceServer(issuer: string): Promise<ResourceServer> {
  const res = await fetch(`${issuer}/.well-known/openid-configuration`)
  if (res.status !== 200) throw new Error(`discovery: ${res.status} ${await res.text()}`)
  const config = (await res.json()) as { issuer: string; jwks_uri: string }
  if (config.issuer !== issuer) throw new Error(`discovery names another issuer: ${config.issuer}`)
  const jwks = createRemoteJWKSet(new URL(config.jwks_uri), { cooldownDuration: 0 })

  const app = Fastify()
  app.get('/whoami', async (req, reply) => {
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1]
    if (!token) return reply.code(401).send({ error: 'no bearer token' })
    try {
      const { payload } = await jwtVerify(token, jwks, { issuer: config.issuer, algorithms: ALGORITHMS })
      return { sub: payload.sub }
    } catch (err) {
      return reply.code(401).send({ error: (err as { code?: string }).code ?? String(err) })
    }
  })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  return {
    app,
    url,
    issuer: config.issuer,
    jwks,
    async whoami(token) {
      const r = await fetch(`${url}/whoami`, { headers: bearer(token) })
      return { status: r.status, body: (await r.json()) as { sub?: string; error?: string } }
    },
  }
}

/** A token with one character of its payload changed (still base64url, so only the signature refuses it). */
function flipPayloadChar(token: string): string {
  const [header, payload, signature] = token.split('.') as [string, string, string]
  const i = Math.floor(payload.length / 2)
  const flipped = payload[i] === 'A' ? 'B' : 'A'
  return [header, payload.slice(0, i) + flipped + payload.slice(i + 1), signature].join('.')
}

/** The same signature over claims rewritten to another user. */
function forgeSubject(token: string, sub: string): string {
  const [header, payload, signature] = token.split('.') as [string, string, string]
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>
  const forged = Buffer.from(JSON.stringify({ ...claims, sub, userId: sub })).toString('base64url')
  return [header, forged, signature].join('.')
}

t.test('getJwks: a resource server needs no code of ours (jose only, over HTTP)', async (t) => {
  const database = await createTestDatabaseUrl(defaultBackend())
  // Why the port chosen here: PUBLIC_URL (the issuer's base) must be this very address, so the issuer
  // URL in the tokens is one the resource server can fetch.
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const service = await startService({
    DATABASE_URL: database.url,
    PORT: String(port),
    PUBLIC_URL: base,
    BOOTSTRAP_CLIENT_KEY: KEY,
    JWT_SECRET: 'resource-server-default-jwt-secret-0123456789',
    SECRETS_KEY: 'resource-server-secrets-key-0123456789abcd',
  })
  const servers: FastifyInstance[] = []
  t.teardown(async () => {
    for (const app of servers) await app.close()
    await stopService(service)
    await database.drop()
  })
  await waitReady({ ...service, base }, 60_000)

  const login = httpLogin(base, PASSWORD)

  /** A tenant made through the API: created with the platform key, switched to `alg` by its admin. */
  async function asymmetricTenant(alg: 'EdDSA' | 'ES256') {
    const code = `rs${randomUUID().slice(0, 8)}`
    const admin = `admin@${code}.test`
    const tenant = dataOf<{ id: string; code: string }>(
      await call(
        base,
        'POST',
        '/api/v1/tenants',
        { code, name: `Resource ${code}`, admin: { email: admin, password: PASSWORD } },
        { 'x-client-key': KEY },
      ),
      'createTenant',
      201,
    )
    const hsToken = await login(code, admin)
    const config = dataOf<{ signingAlgorithm: string }>(
      await call(
        base,
        'PATCH',
        `/api/v1/tenants/${tenant.id}/config`,
        { signingAlgorithm: alg },
        bearer(hsToken),
      ),
      'updateTenantConfig',
    )
    if (config.signingAlgorithm !== alg) throw new Error(`signingAlgorithm is ${config.signingAlgorithm}`)
    const adminToken = await login(code, admin)
    const user = dataOf<{ id: string }>(
      await call(
        base,
        'POST',
        '/api/v1/register',
        { email: `ana@${code}.test`, password: PASSWORD },
        bearer(adminToken),
      ),
      'register',
      201,
    )
    return { id: tenant.id, code, adminToken, userId: user.id, userEmail: `ana@${code}.test` }
  }

  const acme = await asymmetricTenant('EdDSA')
  const issuer = `${base}/t/${acme.code}`
  const api = await resourceServer(issuer)
  servers.push(api.app)
  const token = await login(acme.code, acme.userEmail)

  await t.test(
    'getOpenIdConfiguration: the issuer is {PUBLIC_URL}/t/{code}, cacheable, outside the envelope',
    async (t) => {
      const res = await fetch(`${issuer}/.well-known/openid-configuration`)
      t.equal(res.status, 200)
      t.match(await res.json(), { issuer, jwks_uri: `${issuer}/.well-known/jwks.json` })
      t.equal(res.headers.get('cache-control'), 'public, max-age=300')
      const etag = res.headers.get('etag')
      t.match(etag, /^"[^"]+"$/, 'a strong ETag')
      const again = await fetch(`${issuer}/.well-known/openid-configuration`, {
        headers: { 'if-none-match': etag ?? '' },
      })
      t.equal(again.status, 304, 'If-None-Match with it: 304')
      t.equal(decodeProtectedHeader(token).alg, 'EdDSA', 'the user’s token is signed with EdDSA')
    },
  )

  await t.test('getJwks: the resource server accepts a fresh token of the tenant', async (t) => {
    const res = await api.whoami(token)
    t.equal(res.status, 200)
    t.same(res.body, { sub: acme.userId })
    const keys = (await (await fetch(`${issuer}/.well-known/jwks.json`)).json()) as {
      keys: Record<string, unknown>[]
    }
    t.same(
      keys.keys
        .filter((k) => k.alg !== 'RS256')
        .map((k) => ({ kid: k.kid, alg: k.alg, use: k.use, kty: k.kty, crv: k.crv })),
      [{ kid: decodeProtectedHeader(token).kid, alg: 'EdDSA', use: 'sig', kty: 'OKP', crv: 'Ed25519' }],
      'one access-token key: the one the token names (the OpenID provider’s RSA key beside it)',
    )
    t.notOk(
      keys.keys.some((k) => 'd' in k),
      'and no private part',
    )
  })

  await t.test('getJwks: a tampered token is refused', async (t) => {
    const flipped = await api.whoami(flipPayloadChar(token))
    t.equal(flipped.status, 401, 'one payload character changed')
    const forged = await api.whoami(forgeSubject(token, randomUUID()))
    t.equal(forged.status, 401, 'the claims rewritten to another user')
    t.equal(forged.body.error, 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED')
    const unsigned = await api.whoami(token.split('.').slice(0, 2).join('.') + '.')
    t.equal(unsigned.status, 401, 'the signature removed')
  })

  await t.test('getJwks: a token of another EdDSA tenant is refused', async (t) => {
    const other = await asymmetricTenant('EdDSA')
    const foreign = await login(other.code, other.userEmail)
    t.equal(decodeProtectedHeader(foreign).alg, 'EdDSA')
    const res = await api.whoami(foreign)
    t.equal(res.status, 401, 'refused against the first tenant’s issuer and key set')
    t.equal(res.body.error, 'ERR_JWKS_NO_MATCHING_KEY', 'its kid is not in that key set')

    // The refusal is the tenant's, not the token's: its own issuer and key set accept it.
    const otherIssuer = `${base}/t/${other.code}`
    const own = createRemoteJWKSet(new URL(`${otherIssuer}/.well-known/jwks.json`))
    const { payload } = await jwtVerify(foreign, own, { issuer: otherIssuer, algorithms: ALGORITHMS })
    t.equal(payload.sub, other.userId, 'and its own tenant’s key set verifies it')
    t.equal(payload.iss, otherIssuer)
  })

  await t.test('getJwks: a rotation is followed; the former key still verifies', async (t) => {
    const before = decodeProtectedHeader(token).kid
    const rotated = dataOf<{
      kid: string
      algorithm: string
      previous: { kid: string; expiresAt: string } | null
    }>(
      await call(base, 'POST', '/api/v1/tenants/me/signing-keys/rotate', undefined, bearer(acme.adminToken)),
      'rotateSigningKey',
    )
    t.equal(rotated.algorithm, 'EdDSA')
    t.not(rotated.kid, before, 'a new key')
    t.equal(rotated.previous?.kid, before, 'the former one kept')
    const days = (Date.parse(rotated.previous?.expiresAt ?? '') - Date.now()) / 86_400_000
    t.ok(days > 6.9 && days <= 7, `for 7 days (${days.toFixed(3)})`)

    const fresh = await login(acme.code, acme.userEmail)
    t.equal(decodeProtectedHeader(fresh).kid, rotated.kid, 'new tokens are signed with the new key')
    const res = await api.whoami(fresh)
    t.equal(res.status, 200, 'accepted: jose fetched the key set again for the unknown kid')
    t.same(res.body, { sub: acme.userId })
    const old = await api.whoami(token)
    t.equal(old.status, 200, 'and the token signed before the rotation still verifies')
    t.same(
      api.jwks
        .jwks()
        ?.keys.filter((k) => k.alg !== 'RS256')
        .map((k) => k.kid),
      [rotated.kid, before],
      'the cached key set: the current key first, then the previous one',
    )
  })

  await t.test('getJwks: offline verifications per second in the resource server’s process', async (t) => {
    const options = { issuer: api.issuer, algorithms: ALGORITHMS }
    await jwtVerify(token, api.jwks, options)
    // Why the stopped service: a verification that needed it would hang until jose's 5 s timeout and
    // fail; with the service suspended throughout, every one of them is offline.
    service.child.kill('SIGSTOP')
    let count = 0
    let elapsed = 0
    try {
      const start = performance.now()
      while ((elapsed = performance.now() - start) < 1000) {
        await jwtVerify(token, api.jwks, options)
        count++
      }
    } finally {
      service.child.kill('SIGCONT')
    }
    const perSecond = Math.round(count / (elapsed / 1000))
    t.comment(`offline verifications/s: ${perSecond}`)
    t.ok(count > 0, `${count} verifications in ${Math.round(elapsed)} ms, the service suspended`)
    t.equal((await fetch(`${base}/health`)).status, 200, 'the service answers again afterwards')
  })
})
