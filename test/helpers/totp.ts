// RFC 6238 in a few lines of node:crypto: an implementation other than the service's (otpauth), so the
// tests see the second factor as an authenticator app does. Checked against the RFC's own test vectors
// in test/otp/authenticator.test.ts.
import { createHmac } from 'node:crypto'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

/** Decodes RFC 4648 base32 (no padding needed, case-insensitive). */
export function base32Decode(text: string): Buffer {
  let bits = 0
  let value = 0
  const out: number[] = []
  for (const ch of text.replace(/=+$/, '').toUpperCase()) {
    const i = ALPHABET.indexOf(ch)
    if (i < 0) throw new Error(`not base32: ${ch}`)
    value = (value << 5) | i
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff)
      bits -= 8
    }
  }
  return Buffer.from(out)
}

/** The HOTP value (RFC 4226) of `counter` under `key`, with `digits` digits. */
export function hotp(key: Buffer, counter: number, digits = 6, algorithm = 'sha1'): string {
  const msg = Buffer.alloc(8)
  msg.writeBigUInt64BE(BigInt(counter))
  const mac = createHmac(algorithm, key).update(msg).digest()
  const offset = (mac[mac.length - 1] ?? 0) & 0x0f
  const bin = mac.readUInt32BE(offset) & 0x7fffffff
  return String(bin % 10 ** digits).padStart(digits, '0')
}

/** The TOTP code (30-second steps) at `nowMs`, `drift` steps away. */
export function totpAt(key: Buffer, nowMs: number, drift = 0, digits = 6, algorithm = 'sha1'): string {
  return hotp(key, Math.floor(nowMs / 1000 / 30) + drift, digits, algorithm)
}

/** The secret an otpauth:// URI carries, read as an authenticator app reads it. */
export function secretOfUri(uri: string): Buffer {
  const url = new URL(uri)
  if (url.protocol !== 'otpauth:' || url.host !== 'totp') throw new Error(`not a TOTP URI: ${uri}`)
  const secret = url.searchParams.get('secret')
  if (!secret) throw new Error('no secret in the URI')
  return base32Decode(secret)
}
