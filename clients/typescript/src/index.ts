export { TesseraClient, createTesseraClient } from './client.js'
export {
  type CallInit,
  type CompleteLoginRequest,
  type DataMethod,
  type LoginRequest,
  type LoginResponse,
  type LogoutResponse,
  type Passkey,
  type PasskeyAuthenticationResponse,
  type PasskeyCreationOptions,
  type PasskeyRegistrationResponse,
  type PasskeyRequestOptions,
  type RetryOptions,
  type SecondFactorSetup,
  type SuccessData,
  type TesseraClientOptions,
  type Tokens,
} from './types.js'
export {
  ReauthenticationRequired,
  SecondFactorRequired,
  TesseraError,
  isTesseraError,
  type ErrorCode,
  type ErrorDetails,
  type FailureEnvelope,
  type MfaChallenge,
  type SecondFactorCode,
} from './errors.js'
export { decodeJwtPayload, type TokenClaims } from './jwt.js'
export {
  createTokenVerifier,
  type OpenIdConfiguration,
  type TokenVerifier,
  type TokenVerifierOptions,
  type VerifiedClaims,
} from './verify.js'
export { operations, type OperationAuth, type OperationId } from './generated/operations.js'
export type { components, operations as operationTypes, paths } from './generated/schema.js'
