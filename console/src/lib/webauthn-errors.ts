// What navigator.credentials rejects with, in words for the person: the DOMException names of WebAuthn
// (@simplewebauthn/browser keeps them as `name`, and adds an ERROR_* `code` with its own message).
const PROBLEMS: Record<string, string> = {
  NotAllowedError: 'The passkey prompt was cancelled or timed out. Nothing was changed.',
  AbortError: 'The passkey prompt was closed. Nothing was changed.',
  InvalidStateError: 'This authenticator already holds one of your passkeys.',
  NotSupportedError: 'This browser or its authenticators cannot use a passkey here.',
  ConstraintError: 'This authenticator cannot keep a passkey that verifies you (a PIN or biometrics).',
  SecurityError:
    'The browser refused a passkey on this address: the tenant’s auth_config.webauthn must name this origin.',
}

/**
 * What to tell the person when the browser's side of a passkey failed (a cancelled prompt, an authenticator
 * that cannot do it); null for any other failure (the service's answer, the network), shown as usual.
 */
export function browserProblem(err: unknown): string | null {
  if (typeof err !== 'object' || err === null) return null
  const { name, code, message } = err as { name?: unknown; code?: unknown; message?: unknown }
  const known = typeof name === 'string' ? PROBLEMS[name] : undefined
  if (known) return known
  if (typeof code === 'string' && code.startsWith('ERROR_') && typeof message === 'string') return message
  return null
}
