import { t, type Key } from '../i18n/index.js'

// What navigator.credentials rejects with, in words for the person: the DOMException names of WebAuthn
// (@simplewebauthn/browser keeps them as `name`, and adds an ERROR_* `code` with its own message).
const PROBLEMS: Record<string, Key> = {
  NotAllowedError: 'webauthn.NotAllowedError',
  AbortError: 'webauthn.AbortError',
  InvalidStateError: 'webauthn.InvalidStateError',
  NotSupportedError: 'webauthn.NotSupportedError',
  ConstraintError: 'webauthn.ConstraintError',
  SecurityError: 'webauthn.SecurityError',
}

/**
 * What to tell the person when the browser's side of a passkey failed (a cancelled prompt, an authenticator
 * that cannot do it); null for any other failure (the service's answer, the network), shown as usual.
 */
export function browserProblem(err: unknown): string | null {
  if (typeof err !== 'object' || err === null) return null
  const { name, code, message } = err as { name?: unknown; code?: unknown; message?: unknown }
  const known = typeof name === 'string' ? PROBLEMS[name] : undefined
  if (known) return t(known)
  if (typeof code === 'string' && code.startsWith('ERROR_') && typeof message === 'string') return message
  return null
}
