import { readFileSync } from 'node:fs'

/** A tenant's password policy (`PasswordPolicy`, openapi/components/auth-config.yaml). */
export interface PasswordPolicy {
  /** Minimum length in Unicode code points (8..72; the schema enforces the range). */
  minLength: number
  requireUppercase: boolean
  requireLowercase: boolean
  requireDigit: boolean
  requireSymbol: boolean
  /** Refuse the passwords of the shipped common-password list, compared case-insensitively. */
  rejectCommon: boolean
}

/** A rule name as reported in `details` of PASSWORD_POLICY_VIOLATION, in reporting order. */
export type PasswordRule =
  | 'minLength'
  | 'maxBytes'
  | 'requireUppercase'
  | 'requireLowercase'
  | 'requireDigit'
  | 'requireSymbol'
  | 'rejectCommon'
  /** Not a policy rule of its own: a new password that equals the current one (change and reset). */
  | 'sameAsCurrent'

/** The defaults `PasswordPolicy` states: 8 code points, no character classes, common passwords refused. */
export const defaultPasswordPolicy: Readonly<PasswordPolicy> = Object.freeze({
  minLength: 8,
  requireUppercase: false,
  requireLowercase: false,
  requireDigit: false,
  requireSymbol: false,
  rejectCommon: true,
})

/** bcrypt reads only the first 72 bytes; longer passwords are refused rather than silently cut. */
export const MAX_PASSWORD_BYTES = 72

const UPPER_RE = /\p{Lu}/u
const LOWER_RE = /\p{Ll}/u
const DIGIT_RE = /\p{Nd}/u
// Symbol = any punctuation (\p{P}) or symbol (\p{S}, which includes emoji and currency signs). Letters,
// combining marks, digits, spaces and control characters never count, so a decomposed `é` is not a symbol.
const SYMBOL_RE = /[\p{P}\p{S}]/u

/**
 * Returns the names of the rules `password` fails, in the fixed order minLength, maxBytes,
 * requireUppercase, requireLowercase, requireDigit, requireSymbol, rejectCommon; empty when it passes.
 * maxBytes (over 72 UTF-8 bytes) applies whatever the policy says.
 */
export function checkPassword(password: string, policy: PasswordPolicy): PasswordRule[] {
  const failed: PasswordRule[] = []
  if (codePointLength(password) < policy.minLength) failed.push('minLength')
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) failed.push('maxBytes')
  if (policy.requireUppercase && !UPPER_RE.test(password)) failed.push('requireUppercase')
  if (policy.requireLowercase && !LOWER_RE.test(password)) failed.push('requireLowercase')
  if (policy.requireDigit && !DIGIT_RE.test(password)) failed.push('requireDigit')
  if (policy.requireSymbol && !SYMBOL_RE.test(password)) failed.push('requireSymbol')
  if (policy.rejectCommon && isCommonPassword(password)) failed.push('rejectCommon')
  return failed
}

/** True when `password`, lowercased, is on the shipped common-password list (loaded on first use). */
export function isCommonPassword(password: string): boolean {
  return commonPasswords().has(password.toLowerCase())
}

/** Loads the common-password list now (so no request pays for the file read); returns its size. */
export function preloadCommonPasswords(): number {
  return commonPasswords().size
}

function codePointLength(s: string): number {
  let n = 0
  // The string iterator walks code points, so an astral character (emoji) counts once, not twice.
  for (const _ of s) n++
  return n
}

let common: Set<string> | undefined

function commonPasswords(): Set<string> {
  if (common === undefined) {
    // Resolved next to this module, so it works from src/ under tsx; a build step must copy the .txt.
    const text = readFileSync(new URL('./common-passwords.txt', import.meta.url), 'utf8')
    const set = new Set<string>()
    for (const line of text.split(/\r?\n/)) {
      if (line === '' || line.startsWith('#')) continue
      set.add(line.toLowerCase())
    }
    common = set
  }
  return common
}
