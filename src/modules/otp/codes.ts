import { randomBytes } from 'node:crypto'
import { Secret, TOTP } from 'otpauth'
import QRCode from 'qrcode'
import { sha256Hex } from '../../lib/tokens.js'

// The codes of the second factor (docs/decisions.md D13): RFC 6238 TOTP through `otpauth` (HMAC-SHA-1,
// 6 digits, 30 s, one step of drift either side) and recovery codes. No hand-written HMAC or base32.

const PERIOD = 30
const DIGITS = 6
/** Steps of drift accepted either side of the current one. */
const WINDOW = 1
/** How long a setup waits for its confirmation. */
export const PENDING_SETUP_MS = 10 * 60 * 1000
/** Recovery codes per enrollment. */
export const RECOVERY_CODES = 10

/** A new TOTP secret: 160 random bits, in base32. */
export function newOtpSecret(): string {
  return new Secret({ size: 20 }).base32
}

function totp(secretBase32: string, issuer = '', label = ''): TOTP {
  return new TOTP({
    issuer,
    label,
    algorithm: 'SHA1',
    digits: DIGITS,
    period: PERIOD,
    secret: Secret.fromBase32(secretBase32),
  })
}

/**
 * The TOTP step a code matches at `nowMs` (the current step or one either side), or null. The caller
 * accepts it only if it is later than the last step accepted for the user (no replay).
 */
export function matchingStep(secretBase32: string, code: string, nowMs: number): number | null {
  if (!/^\d{6}$/.test(code)) return null
  const delta = totp(secretBase32).validate({ token: code, timestamp: nowMs, window: WINDOW })
  return delta === null ? null : Math.floor(nowMs / 1000 / PERIOD) + delta
}

/** Whether a submitted code has the TOTP form (six digits, spaces ignored); otherwise it is a recovery code. */
export function totpForm(code: string): string | null {
  const digits = code.replace(/\s/g, '')
  return /^\d{6}$/.test(digits) ? digits : null
}

/** What the setup answers: the secret, the otpauth:// URI for authenticator apps, and its QR code as SVG. */
export async function setupAnswer(secretBase32: string, issuer: string, account: string, expiresAt: Date) {
  const otpauthUri = totp(secretBase32, issuer, account).toString()
  const qrCodeSvg = await QRCode.toString(otpauthUri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
  return { secret: secretBase32, otpauthUri, qrCodeSvg, expiresAt: expiresAt.toISOString() }
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567'

/** Ten new recovery codes, `xxxx-xxxx-xxxx` of base32 (60 random bits each). */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () => {
    const bytes = randomBytes(12)
    const chars = Array.from(bytes, (b) => BASE32.charAt(b & 31)).join('')
    return `${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8, 12)}`
  })
}

/** A recovery code's stored form: SHA-256 of it lowercased without `-` and spaces (high entropy: no salt needed). */
export function recoveryCodeHash(code: string): string {
  return sha256Hex(code.toLowerCase().replace(/[\s-]/g, ''))
}
