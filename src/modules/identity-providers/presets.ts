import type { components } from '../../../generated/openapi.js'

// What the known providers need (contract section 24, `preset`): their endpoints and how their person maps.

type Schemas = components['schemas']
type Kind = Schemas['IdentityProviderKind']
type Preset = Schemas['IdentityProviderPreset']
type Mapping = Schemas['FullClaimMapping']

/** A preset's contribution; what the request gives beside it wins. */
export interface PresetDefaults {
  kind: Kind
  issuer?: string
  authorizationEndpoint?: string
  tokenEndpoint?: string
  userinfoEndpoint?: string
  scopes: string[]
  claimMapping?: Partial<Mapping>
}

/** The OpenID standard claims (section 24's default mapping). */
export const STANDARD_MAPPING: Mapping = {
  sub: 'sub',
  email: 'email',
  emailVerified: 'email_verified',
  username: 'preferred_username',
}

export const OIDC_DEFAULT_SCOPES = ['openid', 'email', 'profile']

export const PRESETS: Record<Preset, PresetDefaults> = {
  google: { kind: 'oidc', issuer: 'https://accounts.google.com', scopes: OIDC_DEFAULT_SCOPES },
  // Why the `common` endpoint: one registration serves every Entra ID directory; its ID tokens carry the
  // directory in `iss`, checked against the issuer template the discovery document gives ({tenantid}).
  microsoft: {
    kind: 'oidc',
    issuer: 'https://login.microsoftonline.com/common/v2.0',
    scopes: OIDC_DEFAULT_SCOPES,
  },
  // GitHub is plain OAuth 2.0: its person is /user (numeric `id`, `login`), with no verified-email claim.
  github: {
    kind: 'oauth2',
    authorizationEndpoint: 'https://github.com/login/oauth/authorize',
    tokenEndpoint: 'https://github.com/login/oauth/access_token',
    userinfoEndpoint: 'https://api.github.com/user',
    scopes: ['read:user', 'user:email'],
    claimMapping: { sub: 'id', username: 'login' },
  },
}
