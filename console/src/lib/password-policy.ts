import { t } from '../i18n/index.js'

// Why bytes: bcrypt reads only a password's first 72 bytes of UTF-8, so the service refuses a longer one
// (contract section 4). A person counts letters, and an accented letter takes 2 bytes, an emoji 4.
const MAX_BYTES = 72

/** "a, b and c" in the reader's language (not Intl.ListFormat: its English puts a comma before "and"). */
export function listWords(items: readonly string[]): string {
  return items.length > 1
    ? `${items.slice(0, -1).join(', ')}${t('list.and')}${items.at(-1)}`
    : (items[0] ?? '')
}

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
    p.requireUppercase && t('policy.capital'),
    p.requireLowercase && t('policy.small'),
    p.requireDigit && t('policy.digit'),
    p.requireSymbol && t('policy.symbol'),
  ].filter((n): n is string => Boolean(n))
  const list = listWords(needs)
  return (
    t('policy.atLeast', { min: p.minLength ?? 8 }) +
    (list ? t('policy.with', { list }) : '') +
    (p.rejectCommon ? t('policy.notCommon') : '.') +
    ` ${t('policy.bytes', { max: MAX_BYTES })}`
  )
}

/** What is wrong with a password the service would refuse for its length in bytes; null when it fits. */
export function passwordTooLong(password: string): string | null {
  const bytes = new TextEncoder().encode(password).length
  return bytes > MAX_BYTES ? t('policy.tooLong', { bytes, max: MAX_BYTES }) : null
}
