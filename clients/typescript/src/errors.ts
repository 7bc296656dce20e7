import type { components } from './generated/schema.js'

type Schemas = components['schemas']

/** Every error code of the contract (the document's `ErrorCode`). */
export type ErrorCode = Schemas['ErrorCode']

/** Every failure envelope of the document: the schemas whose `success` is `false`. */
export type FailureEnvelope = Extract<Schemas[keyof Schemas], { success: false }>

/** What a failure's `details` may hold, for any failure envelope of the document. */
export type ErrorDetails = NonNullable<FailureEnvelope['details']>

/** `details` of OTP_REQUIRED and OTP_ENROLLMENT_REQUIRED: what `completeLogin` needs, and its lifetime in seconds. */
export type MfaChallenge = Schemas['MfaChallenge']

/** The codes of a login stopped at the second factor. */
export type SecondFactorCode = Extract<ErrorCode, 'OTP_REQUIRED' | 'OTP_ENROLLMENT_REQUIRED'>

/** The error every failed call of the client throws. */
export class TesseraError extends Error {
  override readonly name = 'TesseraError'
  /** The HTTP status of the response. */
  readonly status: number
  /** The contract's error code (`body.code`). */
  readonly code: ErrorCode
  /** `body.details` when the service sent any (validation issues, failed password rules, health). */
  readonly details: ErrorDetails | undefined
  /** The response's `X-Request-Id`, to quote when reporting the failure. */
  readonly requestId: string | null
  /** `Retry-After` in seconds on 429 and 503 responses, when sent. */
  readonly retryAfterSeconds: number | null

  constructor(init: {
    status: number
    code: ErrorCode
    message: string
    details?: ErrorDetails
    requestId?: string | null
    retryAfterSeconds?: number | null
  }) {
    super(init.message)
    this.status = init.status
    this.code = init.code
    this.details = init.details
    this.requestId = init.requestId ?? null
    this.retryAfterSeconds = init.retryAfterSeconds ?? null
  }

  /**
   * The error of a failed response, from its parsed body. A body that is not the contract's envelope (a
   * proxy's HTML page, the plain-text 401 of /metrics) gets the code that the contract gives its status.
   */
  static fromResponse(response: Response, body: unknown): TesseraError {
    const envelope = isFailureEnvelope(body) ? body : null
    const seconds = Number(response.headers.get('retry-after'))
    const init = {
      status: response.status,
      code: envelope?.code ?? codeForStatus(response.status),
      message:
        envelope?.error ??
        (typeof body === 'string' && body.length > 0 ? body.slice(0, 200) : response.statusText),
      details: envelope?.details,
      requestId: response.headers.get('x-request-id'),
      retryAfterSeconds: response.headers.has('retry-after') && Number.isFinite(seconds) ? seconds : null,
    }
    const { code, details } = init
    if ((code === 'OTP_REQUIRED' || code === 'OTP_ENROLLMENT_REQUIRED') && isMfaChallenge(details)) {
      return new SecondFactorRequired({ ...init, code, details })
    }
    if (code === 'REAUTHENTICATION_REQUIRED') return new ReauthenticationRequired({ ...init, code })
    return new TesseraError(init)
  }
}

/**
 * A login stopped at the second factor (401 OTP_REQUIRED, or OTP_ENROLLMENT_REQUIRED for a user who has
 * not enrolled an authenticator yet): the password was right, no session was opened. Pass `mfaToken` and
 * a code to `completeLogin` (after `setupSecondFactor` when `enrollment` is true). It is a TesseraError
 * like any other (same `name`, `status`, `code`, `details`), so code that catches TesseraError still works.
 */
export class SecondFactorRequired extends TesseraError {
  // Why `declare`: narrows the inherited fields' types without redefining them (a class field would
  // reset them after super() under ES2022 class fields).
  declare readonly code: SecondFactorCode
  declare readonly details: MfaChallenge
  /** The single-use token `completeLogin` and `setupSecondFactor` take (valid for `expiresIn` seconds, 5 wrong codes). */
  readonly mfaToken: string
  /** Seconds the `mfaToken` stays valid (300). */
  readonly expiresIn: number
  /** True for OTP_ENROLLMENT_REQUIRED: enroll with `setupSecondFactor(mfaToken)` first. */
  readonly enrollment: boolean

  constructor(
    init: ConstructorParameters<typeof TesseraError>[0] & { code: SecondFactorCode; details: MfaChallenge },
  ) {
    super(init)
    this.mfaToken = init.details.mfaToken
    this.expiresIn = init.details.expiresIn
    this.enrollment = init.code === 'OTP_ENROLLMENT_REQUIRED'
  }
}

/**
 * 401 REAUTHENTICATION_REQUIRED: the operation needs a recent sign-in (a login in the last 10 minutes;
 * refreshing does not renew it) and the session's is older. Ask the user for the password again, call
 * `reauthenticate` with it, then retry the call. The session itself is still valid for everything else.
 * A TesseraError like any other (same `name`, `status`, `code`).
 */
export class ReauthenticationRequired extends TesseraError {
  declare readonly code: 'REAUTHENTICATION_REQUIRED'

  constructor(init: ConstructorParameters<typeof TesseraError>[0] & { code: 'REAUTHENTICATION_REQUIRED' }) {
    super(init)
  }
}

/** True when `err` is a TesseraError, and has `code` when one is given. */
export function isTesseraError(err: unknown, code?: ErrorCode): err is TesseraError {
  return err instanceof TesseraError && (code === undefined || err.code === code)
}

function isFailureEnvelope(body: unknown): body is FailureEnvelope {
  if (typeof body !== 'object' || body === null) return false
  const b = body as { success?: unknown; code?: unknown; error?: unknown }
  return b.success === false && typeof b.code === 'string' && typeof b.error === 'string'
}

function isMfaChallenge(details: ErrorDetails | undefined): details is MfaChallenge {
  if (typeof details !== 'object' || details === null || Array.isArray(details)) return false
  const d = details as { mfaToken?: unknown; expiresIn?: unknown }
  return typeof d.mfaToken === 'string' && typeof d.expiresIn === 'number'
}

function codeForStatus(status: number): ErrorCode {
  switch (status) {
    case 400:
      return 'VALIDATION_ERROR'
    case 401:
      return 'UNAUTHORIZED'
    case 403:
      return 'FORBIDDEN'
    case 404:
      return 'NOT_FOUND'
    case 413:
      return 'PAYLOAD_TOO_LARGE'
    case 415:
      return 'UNSUPPORTED_MEDIA_TYPE'
    case 429:
      return 'RATE_LIMIT_EXCEEDED'
    case 502:
    case 503:
    case 504:
      return 'SERVICE_UNAVAILABLE'
    default:
      return 'INTERNAL_ERROR'
  }
}
