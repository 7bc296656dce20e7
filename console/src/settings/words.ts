// Settings in plain words (issue 44): the label and the help of each field of auth_config by its JSON pointer,
// and the sections the screen groups them in. The document's own descriptions speak to API callers; these
// speak to the person running the tenant. A field named here is shown with these words; any other keeps
// the document's.

/** Labels by JSON pointer. */
export const LABELS: Record<string, string> = {
  '/accessTokenExpiresIn': 'Access token lifetime',
  '/refreshTokenExpiresIn': 'Refresh token lifetime',
  '/refreshReuseGraceSeconds': 'Grace for a refresh token sent twice',
  '/maxConcurrentSessions': 'Sessions one person may have at once',
  '/sessionMaxLifetimeSeconds': 'Longest a session lasts',
  '/passwordPolicy': 'Password rules',
  '/passwordPolicy/minLength': 'Minimum length',
  '/passwordPolicy/requireUppercase': 'Needs a capital letter',
  '/passwordPolicy/requireLowercase': 'Needs a small letter',
  '/passwordPolicy/requireDigit': 'Needs a digit',
  '/passwordPolicy/requireSymbol': 'Needs a symbol',
  '/passwordPolicy/rejectCommon': 'Refuse common passwords',
  '/loginIdentifiers': 'People sign in with',
  '/rateLimits': 'Request limits',
  '/rateLimits/requestsPerMinute': 'Requests per minute from one address',
  '/rateLimits/loginPerMinute': 'Sign-in attempts per minute from one address',
  '/lockout': 'Lock an account after failed sign-ins',
  '/lockout/enabled': 'On',
  '/lockout/threshold': 'Failed sign-ins that lock it',
  '/lockout/windowSeconds': 'Counted over',
  '/lockout/baseSeconds': 'First lock lasts',
  '/lockout/maxSeconds': 'Longest lock',
  '/mfa': 'Second factor',
  '/mfa/required': 'Required of everyone',
  '/signingAlgorithm': 'How access tokens are signed',
  '/email': 'Mails',
  '/email/locale': 'Language of the mails',
  '/email/passwordResetTtlSeconds': 'A reset link works for',
  '/email/verification': 'Email verification',
  '/email/verificationTtlSeconds': 'A verification link works for',
  '/email/resetUrl': 'Page a reset link opens (empty: the console’s)',
  '/email/verifyUrl': 'Page a verification link opens (empty: the console’s)',
  '/webauthn': 'Passkeys',
  '/webauthn/rpId': 'Domain the passkeys belong to (relying party id)',
  '/webauthn/rpName': 'Name authenticators show',
  '/webauthn/origins': 'Addresses of the pages that use passkeys (one per line)',
  '/oauth': 'Applications',
  '/oauth/resources': 'APIs the applications may ask tokens for',
  '/oauth/dynamicRegistration': 'Applications may register themselves',
  '/federation': 'Other sign-in providers',
  '/federation/returnOrigins': 'Sites a provider sign-in may return to (one per line)',
  '/branding': 'Branding',
  '/branding/displayName': 'Name shown on the sign-in page',
  '/branding/logo': 'Logo',
  '/branding/color': 'Primary colour',
}

/** Help under a field, by JSON pointer. */
export const HELP: Record<string, string> = {
  '/accessTokenExpiresIn': 'How long a signed-in page may call the API before it renews its token.',
  '/refreshTokenExpiresIn': 'How long a signed-in browser stays signed in without being used.',
  '/refreshReuseGraceSeconds':
    'Two tabs renewing at once send the same token; within this time that is not taken for a theft.',
  '/maxConcurrentSessions': 'Past it, the oldest session ends when a new one starts.',
  '/sessionMaxLifetimeSeconds': 'After it, the person signs in again, however often the session was used.',
  '/loginIdentifiers': 'What the sign-in field takes.',
  '/lockout': 'Off by default: the per-address limits already slow down guessing.',
  '/mfa/required': 'Everyone sets up an authenticator app at their next sign-in.',
  '/signingAlgorithm':
    'HS256 uses a secret of the tenant. EdDSA and ES256 use a key pair whose public half other services can fetch to check tokens themselves. Changing it keeps former tokens valid for 7 days.',
  '/email/verification':
    'Off: addresses are not checked. Optional: a mail asks people to confirm. Required: no sign-in before they do.',
  '/webauthn': 'Passkeys let people sign in with their device instead of a password.',
  '/webauthn/rpId': 'The site’s domain, such as example.com (localhost while developing).',
  '/webauthn/origins': 'Each page address exactly, such as https://app.example.com, with no path.',
  '/oauth/dynamicRegistration': 'Lets tools such as AI assistants add themselves as applications.',
  '/federation/returnOrigins': 'Besides the console: your own sign-in pages, each as https://host.',
  '/branding':
    'Your name, logo and colour on the sign-in, password reset and email confirmation pages, and on the sign-in page applications send people to.',
  '/branding/displayName': 'At most 64 characters.',
  '/branding/logo': 'A PNG, JPEG or WebP image of at most 45 KB.',
  '/branding/color':
    'The colour of the main button. Its text is black or white, whichever reads better on it.',
}

/** The screen's sections: a heading, what it is for, and the top-level fields it holds. */
export const SECTIONS: { id: string; title: string; keys: string[] }[] = [
  { id: 'sign-in', title: 'Sign-in', keys: ['loginIdentifiers', 'lockout', 'rateLimits'] },
  { id: 'passwords', title: 'Passwords', keys: ['passwordPolicy'] },
  {
    id: 'sessions',
    title: 'Sessions and tokens',
    keys: [
      'accessTokenExpiresIn',
      'refreshTokenExpiresIn',
      'sessionMaxLifetimeSeconds',
      'maxConcurrentSessions',
      'refreshReuseGraceSeconds',
      'signingAlgorithm',
    ],
  },
  { id: 'second-factor', title: 'Second factor and passkeys', keys: ['mfa', 'webauthn'] },
  { id: 'email', title: 'Email', keys: ['email'] },
  { id: 'applications', title: 'Applications and other providers', keys: ['oauth', 'federation'] },
  { id: 'branding', title: 'Branding', keys: ['branding'] },
]

/** Option words by value, where the value is a code. */
export const OPTIONS: Record<string, string> = {
  email: 'Email',
  username: 'Username',
  cpf_cnpj: 'CPF/CNPJ',
  off: 'Off',
  optional: 'Optional',
  required: 'Required',
  en: 'English',
  'pt-BR': 'Português (Brasil)',
}

/** Whether a field holds a duration in seconds (shown in minutes, hours or days). */
export const isDuration = (path: string): boolean => /(Seconds|ExpiresIn)$/.test(path)
