import type { components } from './generated/schema.js'

type Schemas = components['schemas']

/** Every error code of the contract (the document's `ErrorCode`). */
export type ErrorCode = Schemas['ErrorCode']

/** Every failure envelope of the document: the schemas whose `success` is `false`. */
export type FailureEnvelope = Extract<Schemas[keyof Schemas], { success: false }>

/** What a failure's `details` may hold, for any failure envelope of the document. */
export type ErrorDetails = NonNullable<FailureEnvelope['details']>

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
    return new TesseraError({
      status: response.status,
      code: envelope?.code ?? codeForStatus(response.status),
      message:
        envelope?.error ??
        (typeof body === 'string' && body.length > 0 ? body.slice(0, 200) : response.statusText),
      details: envelope?.details,
      requestId: response.headers.get('x-request-id'),
      retryAfterSeconds: response.headers.has('retry-after') && Number.isFinite(seconds) ? seconds : null,
    })
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
