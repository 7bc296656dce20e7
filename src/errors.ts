import type { components } from '../generated/openapi.js'

/** The error codes the document declares: the `ErrorCode` enum of openapi/components/errors.yaml. */
export type ErrorCode = components['schemas']['ErrorCode']

/**
 * A row per code of the document, no more. Why a named type: ErrorCode comes from the document, not
 * from this table, so a code added to the document without a row, or a row whose code the document
 * lacks, is a compile error (test/system/error-codes.test.ts compiles both and expects the errors).
 */
export type StatusTable = Readonly<Record<ErrorCode, number>>

/** Every `ErrorCode` of the document with its HTTP status (the one its description gives). */
export const errorStatus = {
  VALIDATION_ERROR: 400,
  PASSWORD_POLICY_VIOLATION: 400,
  INVALID_EMAIL_TOKEN: 400,
  INVALID_CHALLENGE: 400,
  INVALID_PASSKEY: 400,
  UNAUTHORIZED: 401,
  TOKEN_EXPIRED: 401,
  INVALID_CREDENTIALS: 401,
  INVALID_REFRESH_TOKEN: 401,
  OTP_REQUIRED: 401,
  OTP_ENROLLMENT_REQUIRED: 401,
  INVALID_OTP: 401,
  REAUTHENTICATION_REQUIRED: 401,
  FORBIDDEN: 403,
  ROLE_HIERARCHY_VIOLATION: 403,
  USER_INACTIVE: 403,
  IP_NOT_ALLOWED: 403,
  ORIGIN_NOT_ALLOWED: 403,
  EMAIL_NOT_VERIFIED: 403,
  TENANT_NOT_FOUND: 404,
  USER_NOT_FOUND: 404,
  ROLE_NOT_FOUND: 404,
  PERMISSION_NOT_FOUND: 404,
  CLIENT_KEY_NOT_FOUND: 404,
  OAUTH_CLIENT_NOT_FOUND: 404,
  IDENTITY_PROVIDER_NOT_FOUND: 404,
  IDENTITY_PROVIDER_UNREACHABLE: 422,
  INTERACTION_NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  PASSKEY_NOT_FOUND: 404,
  NOT_FOUND: 404,
  USER_ALREADY_EXISTS: 409,
  ROLE_ALREADY_EXISTS: 409,
  PERMISSION_ALREADY_EXISTS: 409,
  TENANT_ALREADY_EXISTS: 409,
  SYSTEM_RESOURCE_PROTECTED: 409,
  OTP_ALREADY_ENABLED: 409,
  OTP_NOT_ENROLLED: 409,
  EMAIL_ALREADY_VERIFIED: 409,
  PASSKEYS_DISABLED: 409,
  LAST_SIGN_IN_METHOD: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  DATABASE_ROUTING_FAILED: 422,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  MAIL_NOT_CONFIGURED: 503,
} as const satisfies StatusTable

/** Public default messages: safe to show to any caller, never carrying internals. */
const defaultMessage: Record<ErrorCode, string> = {
  VALIDATION_ERROR: 'Request validation failed',
  PASSWORD_POLICY_VIOLATION: 'Password does not meet the password policy',
  INVALID_EMAIL_TOKEN: 'Invalid or expired email link',
  INVALID_CHALLENGE: 'Invalid, expired or already used proof of work',
  INVALID_PASSKEY: 'The passkey could not be verified',
  UNAUTHORIZED: 'Unauthorized',
  TOKEN_EXPIRED: 'Token expired',
  INVALID_CREDENTIALS: 'Invalid credentials',
  INVALID_REFRESH_TOKEN: 'Invalid refresh token',
  OTP_REQUIRED: 'A second-factor code is required',
  OTP_ENROLLMENT_REQUIRED: 'A second factor must be enrolled',
  INVALID_OTP: 'Invalid second-factor code',
  REAUTHENTICATION_REQUIRED: 'Sign in again to do this',
  FORBIDDEN: 'Forbidden',
  ROLE_HIERARCHY_VIOLATION: 'The role hierarchy forbids this action',
  USER_INACTIVE: 'User is not active',
  IP_NOT_ALLOWED: 'IP address not allowed for this key',
  ORIGIN_NOT_ALLOWED: 'Origin not allowed for this key',
  EMAIL_NOT_VERIFIED: 'Email address not verified',
  TENANT_NOT_FOUND: 'Tenant not found',
  USER_NOT_FOUND: 'User not found',
  ROLE_NOT_FOUND: 'Role not found',
  PERMISSION_NOT_FOUND: 'Permission not found',
  CLIENT_KEY_NOT_FOUND: 'Client key not found',
  OAUTH_CLIENT_NOT_FOUND: 'OAuth client not found',
  IDENTITY_PROVIDER_NOT_FOUND: 'Identity provider not found',
  IDENTITY_PROVIDER_UNREACHABLE: 'The identity provider could not be reached',
  INTERACTION_NOT_FOUND: 'Interaction not found',
  SESSION_NOT_FOUND: 'Session not found',
  PASSKEY_NOT_FOUND: 'Passkey not found',
  NOT_FOUND: 'Route not found',
  USER_ALREADY_EXISTS: 'User already exists',
  ROLE_ALREADY_EXISTS: 'Role already exists',
  PERMISSION_ALREADY_EXISTS: 'Permission already exists',
  TENANT_ALREADY_EXISTS: 'Tenant already exists',
  SYSTEM_RESOURCE_PROTECTED: 'System resource is protected',
  OTP_ALREADY_ENABLED: 'A second factor is already enrolled',
  OTP_NOT_ENROLLED: 'No second factor is enrolled',
  EMAIL_ALREADY_VERIFIED: 'Email address already verified',
  PASSKEYS_DISABLED: 'Passkeys are not enabled for this tenant',
  LAST_SIGN_IN_METHOD: 'This is the last way to sign in to the account',
  PAYLOAD_TOO_LARGE: 'Payload too large',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported media type',
  DATABASE_ROUTING_FAILED: 'Database routing failed',
  RATE_LIMIT_EXCEEDED: 'Rate limit exceeded',
  INTERNAL_ERROR: 'Internal server error',
  SERVICE_UNAVAILABLE: 'Service unavailable',
  MAIL_NOT_CONFIGURED: 'Mail is not configured on this service',
}

/** An expected failure: the error handler turns it into the failure envelope with its status. */
export class AppError extends Error {
  readonly statusCode: number
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly details?: unknown,
  ) {
    super(message ?? defaultMessage[code])
    this.name = 'AppError'
    this.statusCode = errorStatus[code]
  }
}

/** Throws an AppError; usable in expressions (`row ?? fail('USER_NOT_FOUND')`). */
export function fail(code: ErrorCode, message?: string, details?: unknown): never {
  throw new AppError(code, message, details)
}
