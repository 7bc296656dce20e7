// Better Auth 1.7.25 with its OAuth 2.1 / OpenID provider plugin (@better-auth/oauth-provider 1.7.5, the newest
// published), for the OpenID rows of `make bench-oidc-peer` (bench/oidc-peer.ts). The setup of the peer in
// ../shared/peers/better-auth (auth.mjs, server.mjs): a pg Pool of 10 given as `database` (Better Auth's built-in
// Kysely adapter), its limiter off, telemetry off, logger at `error`, the jwt plugin (here with RS256 keys, as
// the service signs ID tokens), served by node:http through `toNodeHandler` (server.mjs's ADAPTER=node, no
// Fastify in between). The plugin's defaults otherwise: opaque access tokens (no `resource` asked), hashed
// client secrets and tokens, rotating refresh tokens, PKCE required.
//
// At start it runs Better Auth's own migrations (getMigrations, what `auth migrate` runs) on DATABASE_URL.
// Seeding, refused unless BENCH_SEED=1: POST /bench/client, with a signed-up user's session cookie, makes a
// confidential client with the admin API (`adminCreateOAuthClient`, server-only), `skip_consent` on (the service's bench client has its consent given
// once per user; here the consent screen is skipped instead). Users sign up through the public API.
//
//   DATABASE_URL  (required)  PORT (default 4110)  HOST (127.0.0.1)
import http from 'node:http'
import { betterAuth } from 'better-auth'
import { jwt } from 'better-auth/plugins'
import { fromNodeHeaders, toNodeHandler } from 'better-auth/node'
import { getMigrations } from 'better-auth/db/migration'
import { oauthProvider } from '@better-auth/oauth-provider'
import pg from 'pg'

const port = Number(process.env.PORT ?? 4110)
const host = process.env.HOST ?? '127.0.0.1'
const baseURL = `http://${host}:${port}`
if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL is required')
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })

const options = {
  appName: 'bench-peer-better-auth-oauth',
  baseURL,
  basePath: '/api/auth',
  secret: 'peer-benchmark-only-secret-0123456789abcdef0123456789abcdef',
  database: pool,
  emailAndPassword: { enabled: true, autoSignIn: true },
  rateLimit: { enabled: false },
  telemetry: { enabled: false },
  logger: { level: 'error' },
  // The plugin's own guidance: its /token session endpoint is replaced by the provider's.
  disabledPaths: ['/token'],
  plugins: [
    jwt({ jwks: { keyPairConfig: { alg: 'RS256', modulusLength: 2048 } }, disableSettingJwtHeader: true }),
    oauthProvider({
      loginPage: '/sign-in',
      consentPage: '/consent',
      scopes: ['openid', 'profile', 'email', 'offline_access'],
      // The service's lifetimes: 900 s access and ID tokens, 60 s codes.
      accessTokenExpiresIn: 900,
      idTokenExpiresIn: 900,
      codeExpiresIn: 60,
      rateLimit: false,
    }),
  ],
}

const auth = betterAuth(options)
const { runMigrations } = await getMigrations(options)
await runMigrations()

const handler = toNodeHandler(auth)
const send = (res, status, body) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))

async function readJson(req) {
  let text = ''
  for await (const chunk of req) text += chunk
  return text ? JSON.parse(text) : {}
}

const server = http.createServer(async (req, res) => {
  try {
    if (req.url.startsWith('/api/auth/')) return await handler(req, res)
    if (req.url === '/health') return send(res, 200, { ok: true })
    if (req.url === '/bench/client' && req.method === 'POST' && process.env.BENCH_SEED === '1') {
      const body = await readJson(req)
      const client = await auth.api.adminCreateOAuthClient({
        headers: fromNodeHeaders(req.headers),
        body: {
          client_name: 'Bench app',
          redirect_uris: body.redirect_uris,
          token_endpoint_auth_method: 'client_secret_basic',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          scope: 'openid profile email offline_access',
          skip_consent: true,
        },
      })
      return send(res, 201, { client_id: client.client_id, client_secret: client.client_secret })
    }
    return send(res, 404, { error: 'not found' })
  } catch (error) {
    console.error(error)
    if (!res.headersSent) send(res, 500, { error: String(error) })
  }
})
await new Promise((resolve) => server.listen(port, host, resolve))
console.log(JSON.stringify({ listening: baseURL, pid: process.pid }))

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => server.close(() => pool.end().then(() => process.exit(0))))
}
