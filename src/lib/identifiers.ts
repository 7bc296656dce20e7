/** The three kinds of login identifier (`LoginIdentifierKind`, openapi/components/auth-config.yaml). */
export type IdentifierKind = 'email' | 'username' | 'cpf_cnpj'

/** An identifier with its kind and the normalized value that is stored and compared. */
export interface ClassifiedIdentifier {
  kind: IdentifierKind
  value: string
}

// Why a cap before any regex: identifiers arrive unauthenticated at /login. 254 is the longest usable
// email address (RFC 5321 path limit); usernames and CPF/CNPJ are far shorter.
const MAX_IDENTIFIER_LENGTH = 254

// Plausibility only (one `@`, something on both sides, no whitespace or control characters): the
// OpenAPI `format: email` check is the real syntax gate; this keeps obvious garbage out of lookups.
const EMAIL_RE = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+$/u
const USERNAME_RE = /^[A-Za-z0-9._-]{3,64}$/
const CPF_CNPJ_SEPARATORS = /[\s./-]/g
const DIGITS_RE = /^[0-9]*$/
const CNPJ_WEIGHTS_1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
const CNPJ_WEIGHTS_2 = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]

/** Trims and lowercases an email address; null when it is not plausibly one (see EMAIL_RE). */
export function normalizeEmail(raw: string): string | null {
  const s = raw.trim()
  if (s.length > MAX_IDENTIFIER_LENGTH || !EMAIL_RE.test(s)) return null
  return s.toLowerCase()
}

/**
 * Trims and lowercases a username; null unless it matches `^[A-Za-z0-9._-]{3,64}$` and could be told
 * apart from a CPF/CNPJ at login. "Not all digits" is read as "not only digits, dots and hyphens":
 * `123.456` would be classified as cpf_cnpj at login, so accepting it at register would create a user
 * who can never log in by username.
 */
export function normalizeUsername(raw: string): string | null {
  const s = raw.trim()
  if (!USERNAME_RE.test(s)) return null
  if (DIGITS_RE.test(s.replace(CPF_CNPJ_SEPARATORS, ''))) return null
  return s.toLowerCase()
}

/** Strips `.-/` and whitespace; the 11 (CPF) or 14 (CNPJ) digits if the check digits hold, else null. */
export function normalizeCpfCnpj(raw: string): string | null {
  if (raw.length > MAX_IDENTIFIER_LENGTH) return null
  const digits = raw.replace(CPF_CNPJ_SEPARATORS, '')
  if (digits.length === 11) return cpfCheckDigitsHold(digits) ? digits : null
  if (digits.length === 14) return cnpjCheckDigitsHold(digits) ? digits : null
  return null
}

/** True for a CPF (formatted or bare) whose check digits are right; repeated-digit numbers are refused. */
export function isValidCpf(raw: string): boolean {
  const digits = raw.replace(CPF_CNPJ_SEPARATORS, '')
  return digits.length === 11 && cpfCheckDigitsHold(digits)
}

/** True for a numeric CNPJ (formatted or bare) whose check digits are right; repeated digits are refused. */
export function isValidCnpj(raw: string): boolean {
  const digits = raw.replace(CPF_CNPJ_SEPARATORS, '')
  return digits.length === 14 && cnpjCheckDigitsHold(digits)
}

/**
 * Classifies a login identifier by its form and normalizes it: contains `@` → email; only digits after
 * stripping `.-/` and whitespace → cpf_cnpj; otherwise username. Null when the form's own rules fail,
 * which the caller answers exactly like an unknown identifier.
 */
export function classifyIdentifier(raw: string): ClassifiedIdentifier | null {
  if (raw.length > MAX_IDENTIFIER_LENGTH) return null
  const s = raw.trim()
  if (s.includes('@')) {
    const value = normalizeEmail(s)
    return value === null ? null : { kind: 'email', value }
  }
  if (DIGITS_RE.test(s.replace(CPF_CNPJ_SEPARATORS, ''))) {
    const value = normalizeCpfCnpj(s)
    return value === null ? null : { kind: 'cpf_cnpj', value }
  }
  const value = normalizeUsername(s)
  return value === null ? null : { kind: 'username', value }
}

function allSameDigit(digits: string): boolean {
  // Why: 000.000.000-00, 111.111.111-11, ... satisfy the check-digit formula but are never issued.
  return digits.split('').every((c) => c === digits[0])
}

function cpfCheckDigitsHold(d: string): boolean {
  if (!DIGITS_RE.test(d) || allSameDigit(d)) return false
  return cpfDigit(d, 9) === d.charCodeAt(9) - 48 && cpfDigit(d, 10) === d.charCodeAt(10) - 48
}

/** Check digit over the first `n` digits, weights n+1 down to 2 (mod 11, 10 → 0). */
function cpfDigit(d: string, n: number): number {
  let sum = 0
  for (let i = 0; i < n; i++) sum += (d.charCodeAt(i) - 48) * (n + 1 - i)
  const r = (sum * 10) % 11
  return r === 10 ? 0 : r
}

function cnpjCheckDigitsHold(d: string): boolean {
  if (!DIGITS_RE.test(d) || allSameDigit(d)) return false
  return (
    cnpjDigit(d, CNPJ_WEIGHTS_1) === d.charCodeAt(12) - 48 &&
    cnpjDigit(d, CNPJ_WEIGHTS_2) === d.charCodeAt(13) - 48
  )
}

function cnpjDigit(d: string, weights: number[]): number {
  let sum = 0
  for (const [i, w] of weights.entries()) sum += (d.charCodeAt(i) - 48) * w
  const r = sum % 11
  return r < 2 ? 0 : 11 - r
}
