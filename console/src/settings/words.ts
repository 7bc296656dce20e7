import { hasWord, t, type Key } from '../i18n'

// Settings in plain words (issue 44): the label and the help of each field of auth_config by its JSON pointer,
// and the sections the screen groups them in, all in the catalogue (i18n/en/settings-form.ts). The document's
// own descriptions speak to API callers; these speak to the person running the tenant. A field named there
// is shown with those words; any other keeps the document's.

/** The label of the field at a JSON pointer, when the catalogue has one. */
export function labelWords(path: string): string | undefined {
  const key = `label.${path}`
  return hasWord(key) ? t(key) : undefined
}

/** The help under the field at a JSON pointer, when the catalogue has one. */
export function helpWords(path: string): string | undefined {
  const key = `help.${path}`
  return hasWord(key) ? t(key) : undefined
}

/** The screen's sections: a heading (in the catalogue) and the top-level fields it holds. */
export const SECTIONS: { id: string; title: Key; keys: string[] }[] = [
  { id: 'sign-in', title: 'section.sign-in', keys: ['loginIdentifiers', 'lockout', 'rateLimits'] },
  { id: 'passwords', title: 'section.passwords', keys: ['passwordPolicy'] },
  {
    id: 'sessions',
    title: 'section.sessions',
    keys: [
      'accessTokenExpiresIn',
      'refreshTokenExpiresIn',
      'sessionMaxLifetimeSeconds',
      'maxConcurrentSessions',
      'refreshReuseGraceSeconds',
      'signingAlgorithm',
    ],
  },
  { id: 'second-factor', title: 'section.second-factor', keys: ['mfa', 'webauthn'] },
  { id: 'email', title: 'section.email', keys: ['email'] },
  { id: 'applications', title: 'section.applications', keys: ['oauth', 'federation'] },
  { id: 'branding', title: 'section.branding', keys: ['branding'] },
]

// Each language named in itself (as the console's own switch names them): the mails' language is not the reader's.
const LANGUAGES: Record<string, string> = { en: 'English', 'pt-BR': 'Português (Brasil)' }

/** An option's words, where the value is a code; the value itself when it has none. */
export function optionWords(value: string): string {
  const key = `option.${value}`
  return LANGUAGES[value] ?? (hasWord(key) ? t(key) : value)
}

/** Whether a field holds a duration in seconds (shown in minutes, hours or days). */
export const isDuration = (path: string): boolean => /(Seconds|ExpiresIn)$/.test(path)
