import type { Client, ClientPathsWithMethod, FetchOptions, FetchResponse } from 'openapi-fetch'
import type { components, paths } from './generated/schema.js'

// The client's public types: what its calls take and give, and its options (client.ts holds the code).

type Schemas = components['schemas']
/** The HTTP methods the client's typed calls are named after. */
export type Method = 'get' | 'put' | 'post' | 'delete' | 'patch'
type Media = `${string}/${string}`

/** The body of `POST /api/v1/login`. */
export type LoginRequest = paths['/api/v1/login']['post']['requestBody']['content']['application/json']
/**
 * The `data` of a successful login or refresh; `recoveryCodes` only from a `completeLogin` that finished
 * an enrollment.
 */
export type LoginResponse = Schemas['LoginResponse']
/** The body of `POST /api/v1/login/otp`: the `mfaToken` of a SecondFactorRequired and a code. */
export type CompleteLoginRequest = Schemas['LoginOtpRequest']
/** What a browser's `navigator.credentials.get()` answered (`startAuthentication` of @simplewebauthn/browser). */
export type PasskeyAuthenticationResponse = Schemas['AuthenticationResponse']
/** What `navigator.credentials.create()` answered (`startRegistration` of @simplewebauthn/browser). */
export type PasskeyRegistrationResponse = Schemas['RegistrationResponse']
/** The options of a passkey login, for `navigator.credentials.get()`. */
export type PasskeyRequestOptions = Schemas['PasskeyRequestOptions']
/** The options of a passkey registration, for `navigator.credentials.create()`. */
export type PasskeyCreationOptions = Schemas['PasskeyCreationOptions']
/** One of a user's passkeys. */
export type Passkey = Schemas['Passkey']
/** The `data` of `POST /api/v1/login/otp/setup`: the pending authenticator secret. */
export type SecondFactorSetup = Schemas['OtpSetup']
/** The `data` of `POST /api/v1/logout`. */
export type LogoutResponse = Schemas['LogoutResponse']
/** The pair a session keeps, and what `onTokens` hands over for storage. */
export type Tokens = Pick<LoginResponse, 'accessToken' | 'refreshToken'>

// Why: the same "second argument is required when the operation has a required parameter or body" rule
// that openapi-fetch applies to its own methods (its helper is not exported).
type RequiredKeysOfHelper<T> = {
  [K in keyof T]: Record<never, never> extends Pick<T, K> ? never : K
}[keyof T]
type RequiredKeysOf<T> = RequiredKeysOfHelper<T> extends undefined ? never : RequiredKeysOfHelper<T>
type InitParam<Init> =
  RequiredKeysOf<Init> extends never
    ? [(Init & { [key: string]: unknown })?]
    : [Init & { [key: string]: unknown }]

/** The JSON request body of an operation, or never when it takes none. */
type JsonBody<Op> = Op extends { requestBody?: infer RB }
  ? NonNullable<RB> extends { content: { 'application/json': infer B } }
    ? B
    : never
  : never

type BodyOption<Op> = [JsonBody<Op>] extends [never]
  ? { body?: never }
  : Op extends { requestBody: unknown }
    ? { body: JsonBody<Op> }
    : { body?: JsonBody<Op> }

/** The second argument of a call: path, query and header parameters, body, and fetch options. */
export type CallInit<Op> = Omit<FetchOptions<Op>, 'body'> & BodyOption<Op>

/**
 * Marks every body property the operation does not declare as `never`. Why: the init is inferred, and an
 * inferred argument gets no excess-property check, so a misspelt optional body property would pass.
 */
type NoExtraBody<I, Op> = I extends { body?: infer B }
  ? B extends object
    ? { body?: { [K in Exclude<keyof B, keyof JsonBody<Op>>]: never } }
    : unknown
  : unknown

type MaybeOptionalCallInit<Op> =
  RequiredKeysOf<CallInit<Op>> extends never ? CallInit<Op> | undefined : CallInit<Op>

/** A success envelope `{ success: true, data }` unwrapped to its `data`; any other body as it is. */
type Unwrap<T> = T extends { success: true; data: infer D } ? D : T

/** What a call resolves to: the `data` of the operation's success envelope. */
export type SuccessData<R> = R extends { data: infer D; error?: never } ? Unwrap<NonNullable<D>> : never

/**
 * A typed call by path: like openapi-fetch's method of the same name, but it resolves to the success
 * envelope's `data` and throws a TesseraError for any failure.
 */
export type DataMethod<M extends Method> = <
  P extends ClientPathsWithMethod<Client<paths>, M>,
  I extends MaybeOptionalCallInit<paths[P][M]>,
>(
  url: P,
  ...init: InitParam<I & NoExtraBody<I, paths[P][M]>>
) => Promise<
  paths[P][M] extends infer O extends Record<string | number, unknown>
    ? SuccessData<FetchResponse<O, I, Media>>
    : never
>

export interface RetryOptions {
  /** How many times a 429 or 503 is retried (default 2). */
  retries?: number
  /** A wait longer than this is not made: the failure is thrown at once (default 10 000 ms). */
  maxDelayMs?: number
}

export interface TesseraClientOptions {
  /** The service's origin, e.g. `https://auth.example.com`; the paths carry `/api/v1`. */
  baseUrl: string
  /**
   * A Client Key (`ck_...`) for back-end callers, sent as `X-Client-Key` on the operations that take one
   * when no user session is held. Never put a key in a browser.
   */
  clientKey?: string
  /** Tokens saved by an earlier `onTokens`, to resume that session. */
  tokens?: Tokens | null
  /** Called (and awaited) whenever the tokens change: after login and each refresh, and with null when the session ends. */
  onTokens?: (tokens: Tokens | null) => void | Promise<void>
  /** The fetch to send requests with (default: globalThis.fetch). */
  fetch?: (request: Request) => Promise<Response>
  /** Headers sent with every request. */
  headers?: Record<string, string>
  /** Retries of 429 and 503 responses, honouring `Retry-After`; `false` never retries. */
  retry?: RetryOptions | false
  /** Refresh when the access token is this close to its `exp` or past it (default 30 s). */
  refreshLeewaySeconds?: number
  /** The clock, in milliseconds since the epoch (default Date.now). */
  now?: () => number
}
