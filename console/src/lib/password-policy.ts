// Why bytes: bcrypt reads only a password's first 72 bytes of UTF-8, so the service refuses a longer one
// (contract section 4). A person counts letters, and an accented letter takes 2 bytes, an emoji 4.
const MAX_BYTES = 72
const BYTES_WORDS = `at most ${MAX_BYTES} bytes — about ${MAX_BYTES} letters, fewer with accents or emoji`

/**
 * The tenant's password policy in words: "At least 12 characters, with a digit; not a common password. At
 * most 72 bytes — about 72 letters, fewer with accents or emoji."
 */
export function policyWords(p: {
  minLength?: number
  requireUppercase?: boolean
  requireLowercase?: boolean
  requireDigit?: boolean
  requireSymbol?: boolean
  rejectCommon?: boolean
}): string {
  const needs = [
    p.requireUppercase && 'a capital letter',
    p.requireLowercase && 'a small letter',
    p.requireDigit && 'a digit',
    p.requireSymbol && 'a symbol',
  ].filter((n): n is string => Boolean(n))
  const list = needs.length > 1 ? `${needs.slice(0, -1).join(', ')} and ${needs.at(-1)}` : needs[0]
  return (
    `At least ${p.minLength ?? 8} characters` +
    (list ? `, with ${list}` : '') +
    (p.rejectCommon ? '; not a common password.' : '.') +
    ` ${BYTES_WORDS.charAt(0).toUpperCase()}${BYTES_WORDS.slice(1)}.`
  )
}

/** What is wrong with a password the service would refuse for its length in bytes; null when it fits. */
export function passwordTooLong(password: string): string | null {
  const bytes = new TextEncoder().encode(password).length
  return bytes > MAX_BYTES ? `This password is too long (${bytes} bytes): ${BYTES_WORDS}.` : null
}
