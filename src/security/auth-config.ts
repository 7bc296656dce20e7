import { defaultPasswordPolicy, type PasswordPolicy } from '../lib/password-policy.js'

import type { IdentifierKind } from '../lib/identifiers.js'
export type { IdentifierKind }

/** A tenant's resolved `auth_config` (`AuthConfig` in openapi/components/auth-config.yaml), every key set. */
export interface AuthConfig {
  accessTokenExpiresIn: number
  refreshTokenExpiresIn: number
  refreshReuseGraceSeconds: number
  maxConcurrentSessions: number
  /** Seconds a session lasts from its login, whatever its refreshes (`AuthConfig`, as above). */
  sessionMaxLifetimeSeconds: number
  passwordPolicy: PasswordPolicy
  loginIdentifiers: IdentifierKind[]
  rateLimits: { requestsPerMinute: number | null; loginPerMinute: number | null }
  lockout: LockoutConfig
  /** Second factor (`Mfa`): with `required`, every user's logins need a TOTP code. */
  mfa: { required: boolean }
  /** How access tokens are signed (`SigningAlgorithm`): HS256, or EdDSA/ES256 with published keys. */
  signingAlgorithm: 'HS256' | 'EdDSA' | 'ES256'
  /** Email (`EmailConfig`): locale, token lifetimes, verification and links (src/modules/email). */
  email: EmailConfig
  /** Passkeys (`WebauthnConfig`, src/modules/passkeys); null while they are off. */
  webauthn: WebauthnConfig | null
  /** The OpenID provider's resources and registration switch (`OAuthConfig`, src/modules/oidc). */
  oauth: OAuthConfig
  /** Sign-in with other providers (`FederationConfig`, src/modules/federation): where a flow may return. */
  federation: { returnOrigins: string[] }
  /** The sign-in pages' look (`BrandingConfig`, src/modules/tenants/branding.ts); null while unset. */
  branding: BrandingConfig | null
}

/** A tenant's `auth_config.branding` (`BrandingConfig` in openapi/components/branding.yaml). */
export interface BrandingConfig {
  displayName: string | null
  /** A `data:` URL of a PNG, JPEG or WebP image, at most 45 KiB decoded. */
  logo: string | null
  /** `#rrggbb`. */
  color: string | null
}

/** A tenant's `auth_config.oauth` (`OAuthConfig` in openapi/components/oidc.yaml). */
export interface OAuthConfig {
  resources: OAuthResource[]
  dynamicRegistration: boolean
}

/** One API of the tenant (RFC 8707), whose tokens are JWTs (`OAuthResource`). */
export interface OAuthResource {
  indicator: string
  name?: string
  scopes: string[]
  accessTokenTtl?: number
}

/** A tenant's `auth_config.webauthn` (`WebauthnConfig` in openapi/components/passkeys.yaml). */
export interface WebauthnConfig {
  /** The relying party id: the origins' registrable domain (or a domain under it), or `localhost`. */
  rpId: string
  /** The name authenticators show; absent: the tenant's name. */
  rpName?: string
  /** Exact origins (`https://app.example.com`) of the pages that use passkeys. */
  origins: string[]
}

/** A tenant's `auth_config.email` (`EmailConfig` in openapi/components/email.yaml), every key set. */
export interface EmailConfig {
  locale: 'en' | 'pt-BR'
  passwordResetTtlSeconds: number
  verification: 'off' | 'optional' | 'required'
  verificationTtlSeconds: number
  /** null: the console's own page under PUBLIC_URL. */
  resetUrl: string | null
  verifyUrl: string | null
}

/** The email defaults every tenant starts from (contract section 18). */
export function defaultEmailConfig(): EmailConfig {
  return {
    locale: 'en',
    passwordResetTtlSeconds: 1800,
    verification: 'off',
    verificationTtlSeconds: 86_400,
    resetUrl: null,
    verifyUrl: null,
  }
}

/** Account throttling (`Lockout` in openapi/components/auth-config.yaml). */
export interface LockoutConfig {
  enabled: boolean
  threshold: number
  windowSeconds: number
  baseSeconds: number
  maxSeconds: number
}

/** The defaults every tenant starts from. */
export function defaultAuthConfig(): AuthConfig {
  return {
    accessTokenExpiresIn: 900,
    refreshTokenExpiresIn: 2_592_000,
    refreshReuseGraceSeconds: 10,
    maxConcurrentSessions: 10,
    sessionMaxLifetimeSeconds: 7_776_000,
    passwordPolicy: { ...defaultPasswordPolicy },
    loginIdentifiers: ['email'],
    rateLimits: { requestsPerMinute: null, loginPerMinute: null },
    lockout: { enabled: false, threshold: 10, windowSeconds: 900, baseSeconds: 60, maxSeconds: 3600 },
    mfa: { required: false },
    signingAlgorithm: 'HS256',
    email: defaultEmailConfig(),
    webauthn: null,
    oauth: { resources: [], dynamicRegistration: false },
    federation: { returnOrigins: [] },
    branding: null,
  }
}

type Patch = { [k: string]: unknown }
const isPlain = (v: unknown): v is Patch => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Merges a patch key by key (nested objects too; arrays replaced), as PATCH /tenants/:id/config does. */
export function mergeAuthConfig(base: AuthConfig, patch: Patch | null | undefined): AuthConfig {
  const merge = (a: Patch, b: Patch): Patch => {
    const out: Patch = { ...a }
    for (const [k, v] of Object.entries(b)) {
      if (v === undefined) continue
      out[k] = isPlain(v) && isPlain(a[k]) ? merge(a[k] as Patch, v) : v
    }
    return out
  }
  return merge(base as unknown as Patch, patch ?? {}) as unknown as AuthConfig
}

/** Reads a stored auth_config (which may predate newer keys) with the defaults filled in. */
export function resolveAuthConfig(stored: unknown): AuthConfig {
  return mergeAuthConfig(defaultAuthConfig(), isPlain(stored) ? stored : {})
}
