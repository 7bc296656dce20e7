import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

// Format: `v1:<iv>:<tag>:<ciphertext>`, each part unpadded base64url; AES-256-GCM with a random 96-bit
// IV and a 128-bit tag. The version prefix lets a later format (or a key id for key rotation) coexist
// with stored v1 boxes.
const VERSION = 'v1'
const IV_BYTES = 12
const TAG_BYTES = 16
const KEY_BYTES = 32
const B64URL_RE = /^[A-Za-z0-9_-]*$/
const HKDF_INFO = 'tessera:crypto-box:v1'

/**
 * Derives the 32-byte box key from the configured SECRETS_KEY string with HKDF-SHA-256 (empty salt,
 * info `tessera:crypto-box:v1`). Why HKDF rather than a bare SHA-256: the info label separates this
 * key from anything else ever derived from the same setting. Neither stretches a weak input: the
 * setting itself must be long and random (config should demand at least 32 characters).
 */
export function deriveKey(secretsKey: string): Buffer {
  if (secretsKey.length === 0) throw new Error('crypto-box: empty secrets key')
  return Buffer.from(
    hkdfSync('sha256', Buffer.from(secretsKey, 'utf8'), Buffer.alloc(0), HKDF_INFO, KEY_BYTES),
  )
}

/**
 * Encrypts `plain` (UTF-8) with AES-256-GCM under `key`. `context`, when given, is bound as associated
 * data (e.g. `tenant:<id>:jwt-secret`), so a box copied into another row or purpose fails to open.
 */
export function encryptSecret(plain: string, key: Buffer, context = ''): string {
  assertKey(key)
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
  if (context !== '') cipher.setAAD(Buffer.from(context, 'utf8'))
  const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
  return [
    VERSION,
    iv.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    ct.toString('base64url'),
  ].join(':')
}

/** Opens a box made by encryptSecret with the same key and context; throws on tampering or a wrong key. */
export function decryptSecret(box: string, key: Buffer, context = ''): string {
  assertKey(key)
  const [version, ivText, tagText, ctText, ...extra] = box.split(':')
  if (
    version !== VERSION ||
    ivText === undefined ||
    tagText === undefined ||
    ctText === undefined ||
    extra.length > 0 ||
    ![ivText, tagText, ctText].every((p) => B64URL_RE.test(p))
  ) {
    throw new Error('crypto-box: unrecognized format')
  }
  const iv = Buffer.from(ivText, 'base64url')
  const tag = Buffer.from(tagText, 'base64url')
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new Error('crypto-box: unrecognized format')
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
    if (context !== '') decipher.setAAD(Buffer.from(context, 'utf8'))
    decipher.setAuthTag(tag)
    const plain = Buffer.concat([decipher.update(Buffer.from(ctText, 'base64url')), decipher.final()])
    return plain.toString('utf8')
  } catch {
    // Why a fixed message: OpenSSL's text says nothing useful and must not reach a response.
    throw new Error('crypto-box: authentication failed')
  }
}

function assertKey(key: Buffer): void {
  if (!Buffer.isBuffer(key) || key.length !== KEY_BYTES) throw new Error('crypto-box: key must be 32 bytes')
}
