import createClient from 'openapi-fetch'
import type { Client } from 'openapi-fetch'
import { TesseraError, isTesseraError, type ErrorCode } from './errors.js'
import { operations, type OperationAuth } from './generated/operations.js'
import type { paths } from './generated/schema.js'
import { decodeJwtPayload, expiresAtMs, type TokenClaims } from './jwt.js'
import type {
  CompleteLoginRequest,
  DataMethod,
  LoginRequest,
  LoginResponse,
  LogoutResponse,
  Passkey,
  PasskeyAuthenticationResponse,
  PasskeyCreationOptions,
  PasskeyRegistrationResponse,
  PasskeyRequestOptions,
  SecondFactorSetup,
  TesseraClientOptions,
  Tokens,
} from './types.js'

const authByRoute = new Map<string, OperationAuth>(
  Object.values(operations).map((op) => [`${op.method.toUpperCase()} ${op.path}`, op.auth]),
)

type RawResult = { data?: unknown; error?: unknown; response: Response }
type RawCall = (url: string, init?: object) => Promise<RawResult>

/**
 * The Tessera client: typed calls for every operation (`GET`, `POST`, `PUT`, `PATCH`, `DELETE` by path),
 * a user session with automatic, single-flight token refresh, Client Key authentication for back ends,
 * and bounded retries of 429/503. Every failure is a TesseraError.
 */
export class TesseraClient {
  /**
   * The underlying openapi-fetch client, with the same credentials, refresh and retries: its calls resolve
   * to `{ data, error, response }` instead of throwing. Middleware added with `raw.use` is not run.
   */
  readonly raw: Client<paths>
  readonly GET: DataMethod<'get'>
  readonly POST: DataMethod<'post'>
  readonly PUT: DataMethod<'put'>
  readonly PATCH: DataMethod<'patch'>
  readonly DELETE: DataMethod<'delete'>

  readonly #fetch: (request: Request) => Promise<Response>
  readonly #clientKey: string | undefined
  readonly #onTokens: TesseraClientOptions['onTokens']
  readonly #retries: number
  readonly #maxDelayMs: number
  readonly #leewayMs: number
  readonly #now: () => number
  #tokens: Tokens | null
  #refreshing: Promise<Tokens> | null = null
  // Why: bumped on every change of session, so a refresh that was in flight never overwrites a newer one.
  #generation = 0

  constructor(options: TesseraClientOptions) {
    const userFetch = options.fetch
    this.#fetch = userFetch ?? ((request) => globalThis.fetch(request))
    this.#clientKey = options.clientKey
    this.#onTokens = options.onTokens
    this.#retries = options.retry === false ? 0 : Math.max(0, options.retry?.retries ?? 2)
    this.#maxDelayMs = options.retry === false ? 0 : (options.retry?.maxDelayMs ?? 10_000)
    this.#leewayMs = (options.refreshLeewaySeconds ?? 30) * 1000
    this.#now = options.now ?? Date.now
    this.#tokens = options.tokens ?? null

    this.raw = createClient<paths>({ baseUrl: options.baseUrl, headers: options.headers })
    // Why: answering in onRequest lets one place see the operation (schemaPath) and own the whole
    // exchange: credential, refresh, the TOKEN_EXPIRED retry and the 429/503 retries.
    this.raw.use({
      onRequest: ({ request, schemaPath }) =>
        this.#send(request, authByRoute.get(`${request.method} ${schemaPath}`)),
    })
    const wrap = (call: RawCall) => (url: string, init?: object) => call(url, init).then(unwrap)
    const raw = this.raw as unknown as Record<'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', RawCall>
    this.GET = wrap(raw.GET) as DataMethod<'get'>
    this.POST = wrap(raw.POST) as DataMethod<'post'>
    this.PUT = wrap(raw.PUT) as DataMethod<'put'>
    this.PATCH = wrap(raw.PATCH) as DataMethod<'patch'>
    this.DELETE = wrap(raw.DELETE) as DataMethod<'delete'>
  }

  /** The tokens of the current session, or null when none is held. */
  get tokens(): Tokens | null {
    return this.#tokens
  }

  /** The current access token's claims, decoded but not verified; null without a session. */
  claims(): Partial<TokenClaims> | null {
    return this.#tokens ? decodeJwtPayload(this.#tokens.accessToken) : null
  }

  /**
   * Replaces the session's tokens without calling `onTokens` (they came from storage): restores a saved
   * session, or forgets it locally with null (use `logout` to end it on the server).
   */
  setTokens(tokens: Tokens | null): void {
    this.#tokens = tokens
    this.#generation++
  }

  /**
   * Logs in and keeps the tokens (and hands them to `onTokens`). For a user whose logins need a second
   * factor (and no `otp` in the body) it throws a SecondFactorRequired carrying the `mfaToken` for
   * `completeLogin`.
   */
  async login(body: LoginRequest): Promise<LoginResponse> {
    return this.#open(await this.POST('/api/v1/login', { body }))
  }

  /**
   * Signs the user in again after a ReauthenticationRequired: a new login, kept as `login` keeps it (its
   * tokens carry a fresh `auth_time`), then the former session is ended on the server, so sessions do not
   * pile up (best effort: a failure there is ignored). Retry the refused call afterwards. Throws what
   * `login` throws, SecondFactorRequired included; the former session then stays as it was.
   */
  async reauthenticate(body: LoginRequest): Promise<LoginResponse> {
    const former = this.#tokens
    const data = await this.login(body)
    if (former !== null && former.refreshToken !== data.refreshToken) {
      await this.POST('/api/v1/logout', { body: { refreshToken: former.refreshToken } }).catch(
        () => undefined,
      )
    }
    return data
  }

  /**
   * Completes a login stopped at the second factor (`POST /api/v1/login/otp`) with its `mfaToken` and a
   * TOTP or recovery code; keeps the tokens as `login` does. After `setupSecondFactor` the code confirms
   * the new authenticator and the data carries the `recoveryCodes`, shown once.
   */
  async completeLogin(body: CompleteLoginRequest): Promise<LoginResponse> {
    return this.#open(await this.POST('/api/v1/login/otp', { body }))
  }

  /**
   * For a SecondFactorRequired whose `enrollment` is true (`POST /api/v1/login/otp/setup`): a pending
   * authenticator secret (`otpauthUri`, `qrCodeSvg`) to show the user; then `completeLogin` with a code of it.
   */
  async setupSecondFactor(mfaToken: string): Promise<SecondFactorSetup> {
    return this.POST('/api/v1/login/otp/setup', { body: { mfaToken } })
  }

  /**
   * The options of a passkey login for the tenant (`POST /api/v1/login/passkey/options`): hand them to the
   * browser (`startAuthentication({ optionsJSON })` of @simplewebauthn/browser), then its answer to
   * `loginWithPasskey`. The challenge is single-use and lives 5 minutes.
   */
  async passkeyLoginOptions(tenantCode: string): Promise<PasskeyRequestOptions> {
    return this.POST('/api/v1/login/passkey/options', { body: { tenantCode } })
  }

  /**
   * Logs in with the browser's answer to `passkeyLoginOptions` (`POST /api/v1/login/passkey`) and keeps the
   * tokens as `login` does. Never asks for a second factor. Every refusal of the passkey is one
   * INVALID_CREDENTIALS.
   */
  async loginWithPasskey(
    tenantCode: string,
    response: PasskeyAuthenticationResponse,
  ): Promise<LoginResponse> {
    return this.#open(await this.POST('/api/v1/login/passkey', { body: { tenantCode, response } }))
  }

  /**
   * Registers a passkey for the signed-in user: `create` receives the options for
   * `navigator.credentials.create()` (`startRegistration({ optionsJSON })` of @simplewebauthn/browser) and
   * returns the browser's answer, which is then stored. Needs a recent sign-in (ReauthenticationRequired).
   */
  async registerPasskey(
    create: (options: PasskeyCreationOptions) => Promise<PasskeyRegistrationResponse>,
    name?: string,
  ): Promise<Passkey> {
    const options = await this.POST('/api/v1/me/passkeys/options', {})
    const response = await create(options)
    return this.POST('/api/v1/me/passkeys', { body: name === undefined ? { response } : { name, response } })
  }

  /**
   * Exchanges the refresh token for a new pair. At most one refresh is in flight per client: concurrent
   * callers share it, since two refreshes with one token would trip the service's reuse detection. When
   * the service refuses the refresh token (401) the session is over: the tokens are dropped.
   */
  refresh(): Promise<Tokens> {
    this.#refreshing ??= this.#runRefresh().finally(() => {
      this.#refreshing = null
    })
    return this.#refreshing
  }

  /** Ends the session on the server, then forgets the tokens locally (also when the call fails). */
  async logout(): Promise<LogoutResponse> {
    if (this.#tokens === null) throw new Error('no session to log out: call login() or setTokens() first')
    try {
      // Why: an expired access token is refreshed first, so the call below is authorised and carries
      // the refresh token that is current after it.
      await this.#accessToken()
      const refreshToken = this.#tokens?.refreshToken ?? ''
      return await this.POST('/api/v1/logout', { body: { refreshToken } })
    } finally {
      if (this.#tokens !== null) await this.#store(null)
    }
  }

  async #open(data: LoginResponse): Promise<LoginResponse> {
    await this.#store({ accessToken: data.accessToken, refreshToken: data.refreshToken })
    return data
  }

  async #store(tokens: Tokens | null): Promise<void> {
    this.#tokens = tokens
    this.#generation++
    await this.#onTokens?.(tokens)
  }

  async #runRefresh(): Promise<Tokens> {
    const current = this.#tokens
    if (current === null) throw new Error('no session to refresh: call login() or setTokens() first')
    const generation = this.#generation
    let data: LoginResponse
    try {
      data = await this.POST('/api/v1/refresh', { body: { refreshToken: current.refreshToken } })
    } catch (err) {
      if (isTesseraError(err) && err.status === 401 && generation === this.#generation)
        await this.#store(null)
      throw err
    }
    if (generation !== this.#generation) {
      // A login or setTokens happened meanwhile: that session wins.
      if (this.#tokens === null) throw new Error('the session was ended while it was being refreshed')
      return this.#tokens
    }
    const tokens = { accessToken: data.accessToken, refreshToken: data.refreshToken }
    await this.#store(tokens)
    return tokens
  }

  /** The access token to send: the current one, or a refreshed one when it is past or near `exp`. */
  async #accessToken(): Promise<string> {
    if (this.#refreshing !== null) return (await this.#refreshing).accessToken
    const tokens = this.#tokens
    if (tokens === null) throw new Error('no session: call login() or setTokens() first')
    const exp = expiresAtMs(tokens.accessToken)
    if (exp !== null && this.#now() >= exp - this.#leewayMs) return (await this.refresh()).accessToken
    return tokens.accessToken
  }

  /** After a 401 TOKEN_EXPIRED for `stale`: joins the refresh in flight, or starts one unless it already happened. */
  async #refreshAfterExpired(stale: string): Promise<void> {
    if (this.#refreshing !== null) await this.#refreshing
    else if (this.#tokens?.accessToken === stale) await this.refresh()
  }

  async #send(request: Request, auth: OperationAuth | undefined): Promise<Response> {
    // Why: a credential the caller set on the call itself is left alone.
    const explicit = request.headers.has('authorization') || request.headers.has('x-client-key')
    let expiredRetried = false
    let retries = 0
    for (;;) {
      const attempt = request.clone()
      let bearer: string | null = null
      if (!explicit && (auth === 'jwt' || auth === 'jwt-or-key')) {
        if (this.#tokens !== null) {
          bearer = await this.#accessToken()
          attempt.headers.set('authorization', `Bearer ${bearer}`)
        } else if (auth === 'jwt-or-key' && this.#clientKey !== undefined) {
          attempt.headers.set('x-client-key', this.#clientKey)
        }
      }
      const response = await this.#fetch(attempt)
      if (
        bearer !== null &&
        !expiredRetried &&
        response.status === 401 &&
        this.#tokens !== null &&
        (await errorCodeOf(response)) === 'TOKEN_EXPIRED'
      ) {
        expiredRetried = true
        await discard(response)
        await this.#refreshAfterExpired(bearer)
        continue
      }
      const wait = retries < this.#retries ? retryDelayMs(response, retries, this.#maxDelayMs) : null
      if (wait === null) return response
      retries++
      await discard(response)
      await sleep(wait, request.signal)
    }
  }
}

/** Creates a client; see TesseraClientOptions. */
export function createTesseraClient(options: TesseraClientOptions): TesseraClient {
  return new TesseraClient(options)
}

function unwrap(result: RawResult): unknown {
  if (!result.response.ok) throw TesseraError.fromResponse(result.response, result.error)
  const data = result.data
  if (typeof data === 'object' && data !== null && (data as { success?: unknown }).success === true) {
    return (data as { data?: unknown }).data
  }
  return data
}

async function errorCodeOf(response: Response): Promise<ErrorCode | null> {
  try {
    const body = (await response.clone().json()) as { code?: ErrorCode }
    return body.code ?? null
  } catch {
    return null
  }
}

/** How long to wait before retrying `response`, or null when it is not to be retried. */
function retryDelayMs(response: Response, attempt: number, maxDelayMs: number): number | null {
  if (response.status !== 429 && response.status !== 503) return null
  const header = response.headers.get('retry-after')
  let ms: number
  if (header === null) {
    ms = 250 * 2 ** attempt
  } else if (/^\s*\d+(\.\d+)?\s*$/.test(header)) {
    ms = Number(header) * 1000
  } else {
    const at = Date.parse(header)
    if (Number.isNaN(at)) return null
    ms = Math.max(0, at - Date.now())
  }
  // Why: retrying before the service said to would only be refused again.
  return ms <= maxDelayMs ? ms : null
}

async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined)
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer)
        reject(signal.reason)
      },
      { once: true },
    )
  })
}
