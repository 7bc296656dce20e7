import t from 'tap'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { build } from 'esbuild'
import {
  ReauthenticationRequired,
  SecondFactorRequired,
  TesseraError,
  createTesseraClient,
  decodeJwtPayload,
  isTesseraError,
  type TesseraClientOptions,
  type Tokens,
} from '../../clients/typescript/src/index.js'
import { root } from '../helpers/service-process.js'

// The SDK against a scripted fetch: what it sends, when it refreshes and retries, what it throws.
// test/sdk/e2e.test.ts runs the same client against the real service.

const BASE = 'http://tessera.test'
const NOW = Date.UTC(2030, 0, 1)

/** An unsigned JWT whose payload is `claims` (the SDK only decodes it). */
function jwt(claims: Record<string, unknown>): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
  return `${part({ alg: 'HS256', typ: 'JWT', kid: 'k1' })}.${part(claims)}.c2ln`
}

const tokenExpiringAt = (ms: number, n: number) =>
  jwt({ sub: `u${n}`, exp: Math.floor(ms / 1000), jti: `j${n}` })

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', 'x-request-id': `req-${status}`, ...headers },
  })
}

const fail = (status: number, code: string, extra: Record<string, unknown> = {}, headers = {}) =>
  json(status, { success: false, error: code.toLowerCase(), code, ...extra }, headers)

interface Sent {
  method: string
  path: string
  authorization: string | null
  clientKey: string | null
  body: unknown
}

/** A client whose fetch is `handler`; `sent` lists every request it made, in order. */
function scripted(
  handler: (req: Sent, n: number) => Response | Promise<Response>,
  options: Partial<TesseraClientOptions> = {},
) {
  const sent: Sent[] = []
  const client = createTesseraClient({
    baseUrl: BASE,
    now: () => NOW,
    ...options,
    fetch: async (request) => {
      const text = await request.text()
      const req: Sent = {
        method: request.method,
        path: new URL(request.url).pathname,
        authorization: request.headers.get('authorization'),
        clientKey: request.headers.get('x-client-key'),
        body: text ? JSON.parse(text) : undefined,
      }
      sent.push(req)
      return handler(req, sent.length)
    },
  })
  return { client, sent }
}

const me = (id = 'u1') => json(200, { success: true, data: { id } })
const loginData = (accessToken: string, refreshToken: string) => ({
  success: true,
  data: {
    accessToken,
    refreshToken,
    expiresIn: 60,
    user: { id: 'u1', email: 'a@b.test', username: null, tenantId: 't', tenantCode: 'acme' },
  },
})

t.test('login: keeps the tokens, hands them to onTokens, sends no credential', async (t) => {
  const stored: (Tokens | null)[] = []
  const access = tokenExpiringAt(NOW + 600_000, 1)
  const { client, sent } = scripted(
    (req) => (req.path === '/api/v1/login' ? json(200, loginData(access, 'r1')) : me()),
    {
      clientKey: 'ck_should_not_be_sent_to_login',
      onTokens: (tokens) => void stored.push(tokens),
    },
  )
  const data = await client.login({ tenantCode: 'acme', identifier: 'a@b.test', password: 'pw' })
  t.equal(data.accessToken, access)
  t.same(client.tokens, { accessToken: access, refreshToken: 'r1' })
  t.same(stored, [{ accessToken: access, refreshToken: 'r1' }])
  t.equal(sent[0]?.authorization, null, 'login carries no access token')
  t.equal(sent[0]?.clientKey, null, 'nor a Client Key')
  t.same(sent[0]?.body, { tenantCode: 'acme', identifier: 'a@b.test', password: 'pw' })

  await client.GET('/api/v1/me')
  t.equal(sent[1]?.authorization, `Bearer ${access}`, 'later calls carry the access token')
  t.equal(sent[1]?.clientKey, null, 'and never a Client Key beside it')
  t.equal(client.claims()?.sub, 'u1', 'claims() decodes the access token')
})

const challenge = (code: 'OTP_REQUIRED' | 'OTP_ENROLLMENT_REQUIRED', mfaToken = 'mfa-1') =>
  fail(401, code, { details: { mfaToken, expiresIn: 300 } })

t.test('login: OTP_REQUIRED throws a SecondFactorRequired with the mfaToken, keeps no tokens', async (t) => {
  const stored: (Tokens | null)[] = []
  const { client } = scripted(() => challenge('OTP_REQUIRED'), { onTokens: (x) => void stored.push(x) })
  const err = await client
    .login({ tenantCode: 'acme', identifier: 'a@b.test', password: 'pw' })
    .catch((e: unknown) => e)
  t.ok(err instanceof SecondFactorRequired)
  t.ok(err instanceof TesseraError, 'still a TesseraError for code that catches those')
  t.ok(isTesseraError(err, 'OTP_REQUIRED'))
  const e = err as SecondFactorRequired
  t.equal(e.name, 'TesseraError')
  t.equal(e.status, 401)
  t.equal(e.mfaToken, 'mfa-1')
  t.equal(e.expiresIn, 300)
  t.equal(e.enrollment, false)
  t.same(e.details, { mfaToken: 'mfa-1', expiresIn: 300 })
  t.equal(client.tokens, null)
  t.same(stored, [], 'onTokens is not called')

  const bare = scripted(() => fail(401, 'OTP_REQUIRED'))
  const plain = await bare.client
    .POST('/api/v1/login', {
      body: { tenantCode: 'acme', identifier: 'a@b.test', password: 'pw' },
    })
    .catch((x: unknown) => x)
  t.ok(isTesseraError(plain, 'OTP_REQUIRED'))
  t.notOk(
    plain instanceof SecondFactorRequired,
    'without an mfaToken in details it stays a plain TesseraError',
  )
})

t.test(
  'verifyLoginOtp: completeLogin sends { mfaToken, code } and keeps the tokens as login does',
  async (t) => {
    const stored: (Tokens | null)[] = []
    const access = tokenExpiringAt(NOW + 600_000, 1)
    const { client, sent } = scripted(
      (req) => {
        if (req.path === '/api/v1/login') return challenge('OTP_REQUIRED', 'mfa-7')
        if (req.path === '/api/v1/login/otp') return json(200, loginData(access, 'r1'))
        return me()
      },
      { clientKey: 'ck_not_sent', onTokens: (x) => void stored.push(x) },
    )
    let mfaToken = ''
    try {
      await client.login({ tenantCode: 'acme', identifier: 'a@b.test', password: 'pw' })
    } catch (err) {
      if (!(err instanceof SecondFactorRequired)) throw err
      mfaToken = err.mfaToken
    }
    const data = await client.completeLogin({ mfaToken, code: '123456' })
    t.equal(data.accessToken, access)
    t.same(client.tokens, { accessToken: access, refreshToken: 'r1' })
    t.same(stored, [{ accessToken: access, refreshToken: 'r1' }], 'onTokens called once, after completeLogin')
    t.same(sent[1], {
      method: 'POST',
      path: '/api/v1/login/otp',
      authorization: null,
      clientKey: null,
      body: { mfaToken: 'mfa-7', code: '123456' },
    })
    await client.GET('/api/v1/me')
    t.equal(sent[2]?.authorization, `Bearer ${access}`, 'later calls carry the access token')
  },
)

t.test('verifyLoginOtp: a wrong code throws INVALID_OTP and opens no session', async (t) => {
  const stored: (Tokens | null)[] = []
  const { client } = scripted(() => fail(401, 'INVALID_OTP'), { onTokens: (x) => void stored.push(x) })
  await t.rejects(client.completeLogin({ mfaToken: 'mfa-1', code: '000000' }), {
    name: 'TesseraError',
    code: 'INVALID_OTP',
  })
  t.equal(client.tokens, null)
  t.same(stored, [])
})

t.test(
  'setupLoginOtp: OTP_ENROLLMENT_REQUIRED, setupSecondFactor, then completeLogin with recoveryCodes',
  async (t) => {
    const access = tokenExpiringAt(NOW + 600_000, 1)
    const setup = {
      secret: 'A'.repeat(32),
      otpauthUri: 'otpauth://totp/Acme:a%40b.test?secret=AAAA',
      qrCodeSvg: '<svg/>',
      expiresAt: '2030-01-01T00:10:00.000Z',
    }
    const recoveryCodes = Array.from({ length: 10 }, (_, i) => `aaaa-bbbb-ccc${i}`)
    const { client, sent } = scripted((req) => {
      if (req.path === '/api/v1/login') return challenge('OTP_ENROLLMENT_REQUIRED', 'mfa-e')
      if (req.path === '/api/v1/login/otp/setup') return json(200, { success: true, data: setup })
      const body = loginData(access, 'r1')
      return json(200, { ...body, data: { ...body.data, recoveryCodes } })
    })
    const err = await client
      .login({ tenantCode: 'acme', identifier: 'a@b.test', password: 'pw' })
      .catch((e: unknown) => e)
    if (!(err instanceof SecondFactorRequired)) throw new Error('a SecondFactorRequired was expected')
    t.equal(err.code, 'OTP_ENROLLMENT_REQUIRED')
    t.equal(err.enrollment, true)
    t.same(await client.setupSecondFactor(err.mfaToken), setup)
    t.same(sent[1]?.body, { mfaToken: 'mfa-e' })
    t.equal(client.tokens, null, 'the setup opens no session')
    const data = await client.completeLogin({ mfaToken: err.mfaToken, code: '654321' })
    t.same(data.recoveryCodes, recoveryCodes)
    t.same(client.tokens, { accessToken: access, refreshToken: 'r1' })
  },
)

t.test('refresh: 20 concurrent calls with an expired token share one refresh', async (t) => {
  const stale = tokenExpiringAt(NOW - 1000, 1)
  const fresh = tokenExpiringAt(NOW + 600_000, 2)
  const stored: (Tokens | null)[] = []
  let release: () => void = () => undefined
  const gate = new Promise<void>((r) => (release = r))
  const { client, sent } = scripted(
    async (req) => {
      if (req.path === '/api/v1/refresh') {
        await gate // held open while the other calls pile up behind it
        return json(200, loginData(fresh, 'r2'))
      }
      return me()
    },
    { tokens: { accessToken: stale, refreshToken: 'r1' }, onTokens: (x) => void stored.push(x) },
  )
  const calls = Array.from({ length: 20 }, () => client.GET('/api/v1/me'))
  await new Promise((r) => setTimeout(r, 20))
  release()
  const results = await Promise.all(calls)
  t.equal(results.length, 20)
  const refreshes = sent.filter((s) => s.path === '/api/v1/refresh')
  t.equal(refreshes.length, 1, 'exactly one /refresh')
  t.same(refreshes[0]?.body, { refreshToken: 'r1' })
  const meCalls = sent.filter((s) => s.path === '/api/v1/me')
  t.equal(meCalls.length, 20)
  t.ok(
    meCalls.every((s) => s.authorization === `Bearer ${fresh}`),
    'every call went out with the new token',
  )
  t.same(stored, [{ accessToken: fresh, refreshToken: 'r2' }], 'onTokens saw the new pair once')
})

t.test('refresh: concurrent refresh() calls share one request', async (t) => {
  const fresh = tokenExpiringAt(NOW + 600_000, 2)
  const { client, sent } = scripted(() => json(200, loginData(fresh, 'r2')), {
    tokens: { accessToken: tokenExpiringAt(NOW + 600_000, 1), refreshToken: 'r1' },
  })
  const [a, b, c] = await Promise.all([client.refresh(), client.refresh(), client.refresh()])
  t.equal(sent.length, 1)
  t.same([a, b, c], [client.tokens, client.tokens, client.tokens])
  await client.refresh()
  t.equal(sent.length, 2, 'a later refresh is a new request')
  t.same(sent[1]?.body, { refreshToken: 'r2' }, 'with the rotated token')
})

t.test('refresh: a token within 30 s of exp is refreshed before use, one outside is not', async (t) => {
  const near = tokenExpiringAt(NOW + 29_000, 1)
  const fresh = tokenExpiringAt(NOW + 600_000, 2)
  const { client, sent } = scripted((req) =>
    req.path === '/api/v1/refresh' ? json(200, loginData(fresh, 'r2')) : me(),
  )
  client.setTokens({ accessToken: near, refreshToken: 'r1' })
  await client.GET('/api/v1/me')
  t.same(
    sent.map((s) => s.path),
    ['/api/v1/refresh', '/api/v1/me'],
  )
  await client.GET('/api/v1/me')
  t.equal(sent.length, 3, 'the fresh token is used as it is')
  t.equal(sent[2]?.authorization, `Bearer ${fresh}`)
})

t.test('refresh: a 401 TOKEN_EXPIRED refreshes once and retries the call once', async (t) => {
  // The clock says the token is fine (clock skew): the service's verdict decides.
  const first = tokenExpiringAt(NOW + 600_000, 1)
  const second = tokenExpiringAt(NOW + 600_000, 2)
  const { client, sent } = scripted(
    (req) => {
      if (req.path === '/api/v1/refresh') return json(200, loginData(second, 'r2'))
      if (req.authorization === `Bearer ${first}`) return fail(401, 'TOKEN_EXPIRED')
      return me()
    },
    { tokens: { accessToken: first, refreshToken: 'r1' } },
  )
  const results = await Promise.all(Array.from({ length: 5 }, () => client.GET('/api/v1/me')))
  t.equal(results.length, 5)
  t.equal(sent.filter((s) => s.path === '/api/v1/refresh').length, 1, 'one refresh for all five')
  t.equal(sent.filter((s) => s.authorization === `Bearer ${second}`).length, 5, 'each call retried once')

  const always = scripted(
    (req) =>
      req.path === '/api/v1/refresh'
        ? json(200, loginData(tokenExpiringAt(NOW + 600_000, 9), 'r9'))
        : fail(401, 'TOKEN_EXPIRED'),
    { tokens: { accessToken: first, refreshToken: 'r1' } },
  )
  const err = await always.client.GET('/api/v1/me').catch((e: unknown) => e)
  t.ok(isTesseraError(err, 'TOKEN_EXPIRED'), 'a second TOKEN_EXPIRED is thrown, not retried again')
  t.same(
    always.sent.map((s) => s.path),
    ['/api/v1/me', '/api/v1/refresh', '/api/v1/me'],
  )
})

t.test('refresh: 401 INVALID_REFRESH_TOKEN ends the session for every waiting call', async (t) => {
  const stored: (Tokens | null)[] = []
  const { client, sent } = scripted(
    (req) => (req.path === '/api/v1/refresh' ? fail(401, 'INVALID_REFRESH_TOKEN') : me()),
    {
      tokens: { accessToken: tokenExpiringAt(NOW - 1, 1), refreshToken: 'r1' },
      onTokens: (x) => void stored.push(x),
    },
  )
  const errors = await Promise.all(
    [client.GET('/api/v1/me'), client.GET('/api/v1/me')].map((p) => p.catch((e: unknown) => e)),
  )
  t.ok(errors.every((e) => isTesseraError(e, 'INVALID_REFRESH_TOKEN')))
  t.equal(sent.length, 1, 'one refresh, and no call went out with the dead token')
  t.equal(client.tokens, null)
  t.same(stored, [null], 'onTokens(null) tells the app to forget the saved pair')
})

t.test('logout: sends the refresh token, forgets the tokens even when the call fails', async (t) => {
  const access = tokenExpiringAt(NOW + 600_000, 1)
  const stored: (Tokens | null)[] = []
  const ok = scripted(() => json(200, { success: true, data: { revoked: true } }), {
    tokens: { accessToken: access, refreshToken: 'r1' },
    onTokens: (x) => void stored.push(x),
  })
  t.same(await ok.client.logout(), { revoked: true })
  t.same(ok.sent[0], {
    method: 'POST',
    path: '/api/v1/logout',
    authorization: `Bearer ${access}`,
    clientKey: null,
    body: { refreshToken: 'r1' },
  })
  t.equal(ok.client.tokens, null)
  t.same(stored, [null])

  const down = scripted(() => fail(500, 'INTERNAL_ERROR'), {
    tokens: { accessToken: access, refreshToken: 'r1' },
  })
  await t.rejects(down.client.logout(), { name: 'TesseraError', code: 'INTERNAL_ERROR' })
  t.equal(down.client.tokens, null, 'local tokens are gone anyway')
})

t.test(
  'createClientKey: 401 REAUTHENTICATION_REQUIRED throws a ReauthenticationRequired; no refresh, the session stays',
  async (t) => {
    const access = tokenExpiringAt(NOW + 600_000, 1)
    const stored: (Tokens | null)[] = []
    const { client, sent } = scripted(() => fail(401, 'REAUTHENTICATION_REQUIRED'), {
      tokens: { accessToken: access, refreshToken: 'r1' },
      onTokens: (x) => void stored.push(x),
    })
    const err = await client
      .POST('/api/v1/client-keys', { body: { name: 'k', scopes: ['users:read'] } })
      .catch((e: unknown) => e)
    t.ok(err instanceof ReauthenticationRequired)
    t.ok(err instanceof TesseraError, 'still a TesseraError')
    t.ok(isTesseraError(err, 'REAUTHENTICATION_REQUIRED'))
    t.match(err, { name: 'TesseraError', status: 401, requestId: 'req-401' })
    t.equal(sent.length, 1, 'neither refreshed nor retried: a refresh keeps the old sign-in')
    t.same(client.tokens, { accessToken: access, refreshToken: 'r1' }, 'the session stays')
    t.same(stored, [])
  },
)

t.test(
  'reauthenticate: logs in again, ends the former session, and the refused call then succeeds',
  async (t) => {
    const old = tokenExpiringAt(NOW + 600_000, 1)
    const fresh = tokenExpiringAt(NOW + 900_000, 2)
    const stored: (Tokens | null)[] = []
    const { client, sent } = scripted(
      (req) => {
        if (req.path === '/api/v1/login') return json(200, loginData(fresh, 'r2'))
        if (req.path === '/api/v1/logout') return json(200, { success: true, data: { revoked: true } })
        return req.authorization === `Bearer ${fresh}`
          ? json(200, { success: true, data: { otpEnabled: false } })
          : fail(401, 'REAUTHENTICATION_REQUIRED')
      },
      { tokens: { accessToken: old, refreshToken: 'r1' }, onTokens: (x) => void stored.push(x) },
    )
    const call = () => client.DELETE('/api/v1/me/otp', { body: { code: '123456' } })
    const refused = await call().catch((e: unknown) => e)
    t.ok(refused instanceof ReauthenticationRequired)

    const body = { tenantCode: 'acme', identifier: 'a@b.test', password: 'pw' }
    const data = await client.reauthenticate(body)
    t.equal(data.accessToken, fresh)
    t.same(client.tokens, { accessToken: fresh, refreshToken: 'r2' })
    t.same(stored, [{ accessToken: fresh, refreshToken: 'r2' }], 'onTokens as after login')
    t.same(
      sent.slice(1).map((r) => [r.path, r.authorization, r.body]),
      [
        ['/api/v1/login', null, body],
        ['/api/v1/logout', `Bearer ${fresh}`, { refreshToken: 'r1' }],
      ],
      'the former session is ended with the new access token',
    )
    t.same(await call(), { otpEnabled: false }, 'the retried call goes through')

    const failing = scripted(
      (req) =>
        req.path === '/api/v1/login' ? json(200, loginData(fresh, 'r2')) : fail(503, 'SERVICE_UNAVAILABLE'),
      { tokens: { accessToken: old, refreshToken: 'r1' }, retry: false },
    )
    t.equal((await failing.client.reauthenticate(body)).accessToken, fresh, 'a failed logout is ignored')
    t.equal(failing.client.tokens?.refreshToken, 'r2')
  },
)

t.test('register: a Client Key is sent where the operation takes one, and only there', async (t) => {
  const { client, sent } = scripted(() => json(201, { success: true, data: { id: 'u2' } }), {
    clientKey: 'ck_server_side_key',
  })
  await client.POST('/api/v1/register', { body: { email: 'x@y.test', password: 'pw' } })
  t.equal(sent[0]?.clientKey, 'ck_server_side_key')
  t.equal(sent[0]?.authorization, null)
  await client.GET('/api/v1/me').catch(() => undefined)
  t.equal(sent[1]?.clientKey, null, 'getMe takes a JWT only: no key is sent')
  await client.GET('/api/v1/health')
  t.equal(sent[2]?.clientKey, null, 'public operations get no credential')
})

t.test('TesseraError: status, code, details and X-Request-Id of a failure', async (t) => {
  const details = [{ path: 'body.email', message: 'must match format "email"' }]
  const { client } = scripted(() => fail(400, 'VALIDATION_ERROR', { details }, { 'x-request-id': 'abc-123' }))
  const err = await client
    .POST('/api/v1/register', { body: { email: 'nope', password: 'pw' } })
    .catch((e: unknown) => e)
  t.ok(err instanceof TesseraError)
  t.ok(err instanceof Error)
  const e = err as TesseraError
  t.equal(e.name, 'TesseraError')
  t.equal(e.status, 400)
  t.equal(e.code, 'VALIDATION_ERROR')
  t.same(e.details, details)
  t.equal(e.requestId, 'abc-123')
  t.equal(e.message, 'validation_error')

  const proxy = scripted(() => new Response('<html>bad gateway</html>', { status: 502 }))
  const p = (await proxy.client.GET('/api/v1/health').catch((x: unknown) => x)) as TesseraError
  t.equal(p.code, 'SERVICE_UNAVAILABLE', 'a body that is not the envelope gets the code of its status')
  t.equal(p.status, 502)
})

t.test('retries: 429 and 503 are retried as Retry-After says, at most twice', async (t) => {
  const answers = [
    fail(429, 'RATE_LIMIT_EXCEEDED', {}, { 'retry-after': '0' }),
    fail(503, 'SERVICE_UNAVAILABLE', {}, { 'retry-after': '0' }),
  ]
  const { client, sent } = scripted((_req, n) => answers[n - 1] ?? me('after-retries'))
  t.same(await client.GET('/api/v1/health'), { id: 'after-retries' })
  t.equal(sent.length, 3)

  const always = scripted(() => fail(429, 'RATE_LIMIT_EXCEEDED', {}, { 'retry-after': '0' }))
  const err = (await always.client.GET('/api/v1/health').catch((e: unknown) => e)) as TesseraError
  t.equal(err.code, 'RATE_LIMIT_EXCEEDED')
  t.equal(err.retryAfterSeconds, 0)
  t.equal(always.sent.length, 3, 'one call and two retries')

  const long = scripted(() => fail(429, 'RATE_LIMIT_EXCEEDED', {}, { 'retry-after': '60' }))
  const started = Date.now()
  const late = (await long.client.GET('/api/v1/health').catch((e: unknown) => e)) as TesseraError
  t.equal(late.retryAfterSeconds, 60)
  t.equal(long.sent.length, 1, 'a wait above maxDelayMs is not made: thrown at once')
  t.ok(Date.now() - started < 1000)

  const waits = scripted(
    (_req, n) => (n === 1 ? fail(503, 'SERVICE_UNAVAILABLE', {}, { 'retry-after': '1' }) : me()),
    { retry: { retries: 1, maxDelayMs: 5000 } },
  )
  const before = Date.now()
  await waits.client.GET('/api/v1/health')
  t.ok(Date.now() - before >= 950, 'the retry waited Retry-After seconds')

  const never = scripted(() => fail(503, 'SERVICE_UNAVAILABLE', {}, { 'retry-after': '0' }), { retry: false })
  await t.rejects(never.client.GET('/api/v1/health'), { code: 'SERVICE_UNAVAILABLE' })
  t.equal(never.sent.length, 1, 'retry: false never retries')

  const body = scripted((req, n) =>
    n === 1
      ? fail(429, 'RATE_LIMIT_EXCEEDED', {}, { 'retry-after': '0' })
      : json(201, { success: true, data: req.body }),
  )
  t.same(
    await body.client.POST('/api/v1/register', { body: { email: 'x@y.test', password: 'pw' } }),
    { email: 'x@y.test', password: 'pw' },
    'a retried request carries its body again',
  )
})

t.test('decodeJwtPayload: base64url and UTF-8, null for what is not a JWT', async (t) => {
  t.same(decodeJwtPayload(jwt({ username: 'joão-ß', exp: 1 })), { username: 'joão-ß', exp: 1 })
  t.equal(decodeJwtPayload('not-a-jwt'), null)
  t.equal(decodeJwtPayload('a.%%%.c'), null)
})

t.test('the package imports no Node built-in and bundles for browsers', async (t) => {
  const src = join(root, 'clients/typescript/src')
  const files = (await readdir(src, { recursive: true })).filter((f) => f.endsWith('.ts'))
  t.ok(files.length >= 5)
  for (const file of files) {
    const text = await readFile(join(src, file), 'utf8')
    const specifiers = [...text.matchAll(/\bfrom\s+'([^']+)'|\bimport\s*\(\s*'([^']+)'/g)].map(
      (m) => m[1] ?? m[2] ?? '',
    )
    // Its two dependencies, both browser-safe: openapi-fetch, and jose (createTokenVerifier).
    const foreign = specifiers.filter((s) => !s.startsWith('.') && s !== 'openapi-fetch' && s !== 'jose')
    t.same(foreign, [], `${file} imports only its own modules, openapi-fetch and jose`)
  }
  const out = await build({
    entryPoints: [join(src, 'index.ts')],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    logLevel: 'silent',
  })
  t.same(out.errors, [], 'esbuild bundles it for the browser platform')
  const [bundle] = out.outputFiles
  if (!bundle) throw new Error('esbuild wrote no output file')
  t.notMatch(bundle.text, /\brequire\(|["']node:/, 'with no Node module in the bundle')
})
