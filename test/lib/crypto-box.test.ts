import t from 'tap'
import { decryptSecret, deriveKey, encryptSecret } from '../../src/lib/crypto-box.js'

const key = deriveKey('a configured secrets key with plenty of entropy 4f9c')

t.test('deriveKey is deterministic, 32 bytes, and input-sensitive', async (t) => {
  t.equal(key.length, 32)
  t.same(deriveKey('a configured secrets key with plenty of entropy 4f9c'), key)
  t.notSame(deriveKey('a configured secrets key with plenty of entropy 4f9d'), key)
  t.throws(() => deriveKey(''))
})

t.test('round trip, with a random IV each time', async (t) => {
  const plain = 'postgres://user:pä55@db.example/tenant_a'
  const a = encryptSecret(plain, key)
  const b = encryptSecret(plain, key)
  t.match(a, /^v1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]+$/)
  t.not(a, b, 'same plaintext, different boxes')
  t.equal(decryptSecret(a, key), plain)
  t.equal(decryptSecret(encryptSecret('', key), key), '', 'empty plaintext')
})

t.test('tampering, wrong key, wrong context and bad formats throw', async (t) => {
  const box = encryptSecret('jwt-secret-value', key, 'tenant:1:jwt')
  t.equal(decryptSecret(box, key, 'tenant:1:jwt'), 'jwt-secret-value')
  const [v = '', iv = '', tag = '', ct = ''] = box.split(':')
  const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1)
  t.throws(
    () => decryptSecret([v, iv, tag, flip(ct)].join(':'), key, 'tenant:1:jwt'),
    /authentication failed/,
  )
  t.throws(
    () => decryptSecret([v, iv, flip(tag), ct].join(':'), key, 'tenant:1:jwt'),
    /authentication failed/,
  )
  t.throws(
    () => decryptSecret([v, flip(iv), tag, ct].join(':'), key, 'tenant:1:jwt'),
    /authentication failed/,
  )
  t.throws(
    () => decryptSecret(box, deriveKey('another key entirely'), 'tenant:1:jwt'),
    /authentication failed/,
  )
  t.throws(() => decryptSecret(box, key, 'tenant:2:jwt'), /authentication failed/, 'moved to another tenant')
  t.throws(() => decryptSecret(box, key), /authentication failed/, 'context dropped')
  t.throws(() => decryptSecret(['v2', iv, tag, ct].join(':'), key, 'tenant:1:jwt'), /format/)
  t.throws(() => decryptSecret([v, iv, tag].join(':'), key), /format/)
  t.throws(() => decryptSecret([v, iv.slice(2), tag, ct].join(':'), key), /format/, 'short IV')
  t.throws(() => decryptSecret([v, iv, tag, ct + '!'].join(':'), key), /format/)
  t.throws(() => encryptSecret('x', Buffer.alloc(16)), /32 bytes/)
})
