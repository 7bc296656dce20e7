import t from 'tap'
import { randomUUID } from 'node:crypto'
import {
  SecondFactorRequired,
  createTesseraClient,
  type TesseraClientOptions,
  type Tokens,
} from '../../clients/typescript/src/index.js'
import { backends, createTestDatabaseUrl, defaultBackend, type Backend } from '../helpers/db.js'
import { startService, stopService, waitReady } from '../helpers/service-process.js'
import { rejection } from '../helpers/sdk.js'
import { secretOfUri, totpAt } from '../helpers/totp.js'

// The SDK (@tessera/client) end to end: the service started as a separate process, as `npm start` runs
// it, called over real HTTP. Once per back-end: PGlite, and PostgreSQL when TEST_DATABASE_URL is set
// (only the one TEST_BACKEND names, when it names one, as `make tap` runs the suite once per back-end).

const KEY = 'ck_' + 'S'.repeat(43)
const ADMIN = { email: 'admin@sdk.test', password: 'Sdk-e2e-passphrase-1' }

const chosen: Backend[] = process.env.TEST_BACKEND ? [defaultBackend()] : backends()

interface Seen {
  method: string
  path: string
  bearer: boolean
  clientKey: boolean
}

/** A fetch that records what the SDK sends (method, path, which credential), then sends it. */
function recording(): { seen: Seen[]; fetch: (request: Request) => Promise<Response> } {
  const seen: Seen[] = []
  return {
    seen,
    fetch: (request) => {
      seen.push({
        method: request.method,
        path: new URL(request.url).pathname,
        bearer: request.headers.get('authorization')?.startsWith('Bearer ') ?? false,
        clientKey: request.headers.has('x-client-key'),
      })
      return fetch(request)
    },
  }
}

/** The SecondFactorRequired a login stopped at the second factor throws. */
async function secondFactor(promise: Promise<unknown>): Promise<SecondFactorRequired> {
  const err = await rejection(promise)
  if (err instanceof SecondFactorRequired) return err
  throw err
}

for (const backend of chosen) {
  t.test(`@tessera/client against the service over HTTP (${backend})`, async (t) => {
    const database = await createTestDatabaseUrl(backend)
    const service = await startService({
      DATABASE_URL: database.url,
      BOOTSTRAP_CLIENT_KEY: KEY,
      JWT_SECRET: 'sdk-e2e-default-jwt-secret-0123456789abcdef',
      SECRETS_KEY: 'sdk-e2e-secrets-key-0123456789abcdef0123',
    })
    // Why: one teardown, in this order: the service lets go of its database before it is dropped.
    t.teardown(async () => {
      await stopService(service)
      await database.drop()
    })
    await waitReady(service, 60_000)
    const baseUrl = service.base
    const client = (options: Partial<TesseraClientOptions> = {}) =>
      createTesseraClient({ baseUrl, ...options })

    const code = `sdk${randomUUID().slice(0, 8)}`
    let tenantId = ''
    let adminUserId = ''
    let readerKey = ''

    await t.test('createTenant: a platform Client Key creates a tenant with its admin', async (t) => {
      const rec = recording()
      const platform = client({ clientKey: KEY, fetch: rec.fetch })
      const tenant = await platform.POST('/api/v1/tenants', {
        body: { code, name: 'SDK e2e', auth_config: { accessTokenExpiresIn: 60 }, admin: ADMIN },
      })
      t.equal(tenant.code, code)
      t.equal(tenant.auth_config.accessTokenExpiresIn, 60)
      t.type(tenant.adminUserId, 'string')
      tenantId = tenant.id
      adminUserId = tenant.adminUserId ?? ''
      t.same(rec.seen, [{ method: 'POST', path: '/api/v1/tenants', bearer: false, clientKey: true }])

      const key = await platform.POST('/api/v1/client-keys', {
        body: { tenantId, name: 'sdk-reader', scopes: ['users:read'] },
      })
      t.match(key.key, /^ck_[A-Za-z0-9_-]{43,}$/, 'createClientKey shows the value once')
      t.equal(key.tenantId, tenantId)
      readerKey = key.key
    })

    const saved: (Tokens | null)[] = []
    const sessionRec = recording()
    let skewMs = 0
    const session = client({
      fetch: sessionRec.fetch,
      now: () => Date.now() + skewMs,
      onTokens: (tokens) => void saved.push(tokens),
    })

    await t.test('login: the session keeps the tokens and hands them to onTokens', async (t) => {
      const data = await session.login({
        tenantCode: code.toUpperCase(),
        identifier: ADMIN.email,
        password: ADMIN.password,
      })
      t.equal(data.user.id, adminUserId)
      t.equal(data.expiresIn, 60)
      t.same(session.tokens, { accessToken: data.accessToken, refreshToken: data.refreshToken })
      t.same(saved, [session.tokens])
      const claims = session.claims()
      t.equal(claims?.tenantId, tenantId)
      t.equal((claims?.exp ?? 0) - (claims?.iat ?? 0), 60, 'the tenant’s 60 s access tokens')
    })

    await t.test('getMe: the access token calls as the admin', async (t) => {
      const me = await session.GET('/api/v1/me')
      t.equal(me.id, adminUserId)
      t.equal(me.email, ADMIN.email)
      t.ok(me.roles.includes('admin'))
      t.ok(me.permissions.includes('auth:logs'))
      t.same(sessionRec.seen.at(-1), { method: 'GET', path: '/api/v1/me', bearer: true, clientKey: false })
    })

    await t.test('refresh: 20 concurrent getMe calls past exp cost exactly one /refresh', async (t) => {
      const before = session.tokens
      const sentBefore = sessionRec.seen.length
      skewMs = 61_000 // the SDK's clock says the 60 s token has expired
      let results
      try {
        results = await Promise.all(Array.from({ length: 20 }, () => session.GET('/api/v1/me')))
      } finally {
        skewMs = 0
      }
      t.equal(results.length, 20)
      t.ok(
        results.every((me) => me.id === adminUserId),
        'every call answered for the admin',
      )
      const sent = sessionRec.seen.slice(sentBefore)
      t.equal(sent.filter((s) => s.path === '/api/v1/refresh').length, 1, 'one /refresh request')
      t.equal(sent.filter((s) => s.path === '/api/v1/me').length, 20, 'and no getMe repeated')
      t.not(session.tokens?.refreshToken, before?.refreshToken, 'the refresh token was rotated')
      t.same(saved.at(-1), session.tokens, 'onTokens got the new pair')
      t.equal(saved.length, 2)

      const logs = await session.GET('/api/v1/auth-logs', { params: { query: { action: 'REFRESH_TOKEN' } } })
      t.equal(logs.total, 1, 'listAuthLogs shows one REFRESH_TOKEN row')
      t.equal(logs.items[0]?.success, true)
    })

    await t.test('getMe: a client restored from stored tokens calls as the same user', async (t) => {
      const stored = saved.at(-1)
      t.ok(stored)
      const restored = client({ tokens: stored })
      t.equal((await restored.GET('/api/v1/me')).id, adminUserId)
    })

    await t.test('logout: ends the session; its refresh token is refused afterwards', async (t) => {
      const tokens = session.tokens
      t.ok(tokens)
      t.same(await session.logout(), { revoked: true })
      t.equal(session.tokens, null)
      t.equal(saved.at(-1), null, 'onTokens(null): forget the stored pair')
      const zombie = client({ tokens })
      const err = await rejection(zombie.refresh())
      t.equal(err.status, 401)
      t.equal(err.code, 'INVALID_REFRESH_TOKEN')
      t.equal(zombie.tokens, null, 'a refused refresh ends the session locally too')
    })

    await t.test(
      'getUser: a Client Key reads a user of its tenant; 404 USER_NOT_FOUND otherwise',
      async (t) => {
        const rec = recording()
        const backend = client({ clientKey: readerKey, fetch: rec.fetch })
        const user = await backend.GET('/api/v1/users/{userId}', {
          params: { path: { userId: adminUserId } },
        })
        t.equal(user.email, ADMIN.email)
        t.equal(rec.seen[0]?.clientKey, true)
        t.equal(rec.seen[0]?.bearer, false)
        const missing = await rejection(
          backend.GET('/api/v1/users/{userId}', { params: { path: { userId: randomUUID() } } }),
        )
        t.equal(missing.status, 404)
        t.equal(missing.code, 'USER_NOT_FOUND')
        t.match(missing.requestId, /^[A-Za-z0-9._:-]{1,128}$/, 'the response’s X-Request-Id')
      },
    )

    await t.test('getMe: 401 UNAUTHORIZED without a credential, with the X-Request-Id', async (t) => {
      const anonymous = client({ headers: { 'x-request-id': 'sdk-e2e-401' } })
      const err = await rejection(anonymous.GET('/api/v1/me'))
      t.equal(err.status, 401)
      t.equal(err.code, 'UNAUTHORIZED')
      t.equal(err.requestId, 'sdk-e2e-401')
      t.ok(err instanceof Error)
    })

    await t.test('createTenant: 403 FORBIDDEN for a Client Key without tenants:create', async (t) => {
      const err = await rejection(
        client({ clientKey: readerKey }).POST('/api/v1/tenants', { body: { code: `x${code}`, name: 'No' } }),
      )
      t.equal(err.status, 403)
      t.equal(err.code, 'FORBIDDEN')
    })

    await t.test('register: 400 VALIDATION_ERROR carries the failed paths in details', async (t) => {
      const err = await rejection(
        client({ clientKey: KEY }).POST('/api/v1/register', {
          body: { email: 'not-an-email', password: 'x' },
        }),
      )
      t.equal(err.status, 400)
      t.equal(err.code, 'VALIDATION_ERROR')
      t.ok(Array.isArray(err.details) && err.details.length > 0, 'details lists the problems')
    })

    // The second factor. Each client has an address of its own (X-Forwarded-For, believed from loopback):
    // /login, /login/otp, /login/otp/setup and /me/otp/confirm share the per-IP login budget of 5 a minute.
    const OTP_USER = { email: 'otp@sdk.test', password: 'Sdk-otp-passphrase-2' }
    const ENROLL_USER = { email: 'enroll@sdk.test', password: 'Sdk-otp-passphrase-3' }
    const otpLogin = (user: { email: string; password: string }) => ({
      tenantCode: code,
      identifier: user.email,
      password: user.password,
    })
    const at = (ip: string, options: Partial<TesseraClientOptions> = {}) =>
      client({ headers: { 'x-forwarded-for': ip }, ...options })
    let otpKey: Buffer = Buffer.alloc(0)
    let enrollUserId = ''

    await t.test('confirmMyOtp: a user enrolls an authenticator through the typed calls', async (t) => {
      const admin = at('203.0.113.80')
      await admin.login(otpLogin(ADMIN))
      await admin.POST('/api/v1/register', { body: OTP_USER })
      enrollUserId = (await admin.POST('/api/v1/register', { body: ENROLL_USER })).id
      await admin.logout()

      const user = at('203.0.113.81')
      await user.login(otpLogin(OTP_USER))
      const setup = await user.POST('/api/v1/me/otp/setup')
      t.match(setup.otpauthUri, /^otpauth:\/\/totp\//)
      otpKey = secretOfUri(setup.otpauthUri)
      // Why the previous step: a step is accepted once per user, and the login below uses the current
      // one (the service accepts one step either side of its clock).
      const confirmed = await user.POST('/api/v1/me/otp/confirm', {
        body: { code: totpAt(otpKey, Date.now(), -1) },
      })
      t.equal(confirmed.otpEnabled, true)
      t.equal(confirmed.recoveryCodes.length, 10)
      await user.logout()
    })

    await t.test(
      'verifyLoginOtp: login() throws SecondFactorRequired, completeLogin() with a TOTP code opens the session',
      async (t) => {
        const saved: (Tokens | null)[] = []
        const user = at('203.0.113.84', { onTokens: (tokens) => void saved.push(tokens) })
        const err = await secondFactor(user.login(otpLogin(OTP_USER)))
        t.equal(err.status, 401)
        t.equal(err.code, 'OTP_REQUIRED')
        t.equal(err.enrollment, false)
        t.equal(err.expiresIn, 300)
        t.match(err.mfaToken, /^[A-Za-z0-9_-]{43,}$/)
        t.equal(user.tokens, null, 'no session before the second factor')
        t.same(saved, [])

        const data = await user.completeLogin({ mfaToken: err.mfaToken, code: totpAt(otpKey, Date.now()) })
        t.equal(data.user.email, OTP_USER.email)
        t.equal(data.recoveryCodes, undefined, 'recovery codes come only with an enrollment')
        t.same(user.tokens, { accessToken: data.accessToken, refreshToken: data.refreshToken })
        t.same(saved, [user.tokens], 'onTokens got the pair, as after login')
        const me = await user.GET('/api/v1/me')
        t.equal(me.email, OTP_USER.email)
        t.equal(me.otpEnabled, true)

        const replay = await rejection(user.completeLogin({ mfaToken: err.mfaToken, code: '000000' }))
        t.equal(replay.code, 'INVALID_CREDENTIALS', 'the mfaToken is single-use')
      },
    )

    await t.test(
      'setupLoginOtp: an enrollment required by an administrator is made during login',
      async (t) => {
        const admin = at('203.0.113.82')
        await admin.login(otpLogin(ADMIN))
        await admin.PATCH('/api/v1/users/{userId}', {
          params: { path: { userId: enrollUserId } },
          body: { otpEnabled: true },
        })
        await admin.logout()

        const user = at('203.0.113.83')
        const err = await secondFactor(user.login(otpLogin(ENROLL_USER)))
        t.equal(err.code, 'OTP_ENROLLMENT_REQUIRED')
        t.equal(err.enrollment, true)
        const setup = await user.setupSecondFactor(err.mfaToken)
        t.match(setup.otpauthUri, /^otpauth:\/\/totp\//)
        t.equal(user.tokens, null, 'the setup opens no session')
        const data = await user.completeLogin({
          mfaToken: err.mfaToken,
          code: totpAt(secretOfUri(setup.otpauthUri), Date.now()),
        })
        t.equal(data.recoveryCodes?.length, 10, 'the recovery codes, shown once')
        const me = await user.GET('/api/v1/me')
        t.equal(me.id, enrollUserId)
        t.equal(me.otpEnabled, true)
      },
    )

    await t.test(
      'login: 429 RATE_LIMIT_EXCEEDED after 5 attempts a minute, not retried past the cap',
      async (t) => {
        // Why: its own address (the service believes X-Forwarded-For from loopback), so the budget is fresh.
        const rec = recording()
        const attacker = client({ headers: { 'x-forwarded-for': '203.0.113.77' }, fetch: rec.fetch })
        const wrong = { tenantCode: code, identifier: ADMIN.email, password: 'wrong-password-123' }
        for (let i = 0; i < 5; i++) {
          const err = await rejection(attacker.login(wrong))
          t.equal(err.code, 'INVALID_CREDENTIALS', `attempt ${i + 1}: 401 INVALID_CREDENTIALS`)
        }
        const limited = await rejection(attacker.login(wrong))
        t.equal(limited.status, 429)
        t.equal(limited.code, 'RATE_LIMIT_EXCEEDED')
        t.equal(limited.message, 'Rate limit exceeded')
        t.ok(
          limited.retryAfterSeconds !== null &&
            limited.retryAfterSeconds > 10 &&
            limited.retryAfterSeconds <= 60,
          `Retry-After ${limited.retryAfterSeconds} s`,
        )
        t.equal(rec.seen.length, 6, 'a wait beyond maxDelayMs (10 s) is not made: no retry')
        t.equal(attacker.tokens, null)
      },
    )
  })
}
