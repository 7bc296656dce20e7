import { createHash } from 'node:crypto'
import t from 'tap'
import {
  isClientKeyShape,
  keyPrefix,
  newClientKeyValue,
  newKid,
  newRefreshToken,
  randomToken,
  sha256Hex,
  timingSafeEqualStr,
  uuidV7,
} from '../../src/lib/tokens.js'

const B64URL = /^[A-Za-z0-9_-]+$/

t.test('randomToken is unpadded base64url of the requested size', async (t) => {
  t.equal(randomToken().length, 43)
  t.equal(randomToken(16).length, 22)
  t.match(randomToken(), B64URL)
  t.not(randomToken(), randomToken())
})

t.test('sha256Hex', async (t) => {
  t.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  t.equal(sha256Hex('é'), createHash('sha256').update(Buffer.from('é', 'utf8')).digest('hex'), 'UTF-8 bytes')
})

t.test('client key values, prefix and shape', async (t) => {
  const v = newClientKeyValue()
  t.match(v, /^ck_[A-Za-z0-9_-]{43}$/)
  t.ok(isClientKeyShape(v))
  t.equal(keyPrefix(v), v.slice(0, 12))
  t.equal(keyPrefix(v).length, 12)
  t.not(newClientKeyValue(), v)
  t.ok(isClientKeyShape('ck_' + 'a'.repeat(64)), 'longer bootstrap keys are fine')
  for (const bad of [
    '',
    'ck_',
    'ck_' + 'a'.repeat(42),
    'CK_' + 'a'.repeat(43),
    'ck_' + 'a'.repeat(42) + '=',
    'ck_' + 'a'.repeat(257),
    'eyJhbGciOi.x.y',
  ]) {
    t.notOk(isClientKeyShape(bad), JSON.stringify(bad.slice(0, 20)))
  }
})

t.test('refresh tokens and kids', async (t) => {
  t.match(newRefreshToken(), /^[A-Za-z0-9_-]{43}$/)
  t.not(newRefreshToken(), newRefreshToken())
  t.match(newKid(), /^[A-Za-z0-9_-]{12}$/)
  t.not(newKid(), newKid())
})

t.test('timingSafeEqualStr', async (t) => {
  t.ok(timingSafeEqualStr('secret-token', 'secret-token'))
  t.notOk(timingSafeEqualStr('secret-token', 'secret-tokeN'))
  t.notOk(timingSafeEqualStr('short', 'a much longer string'))
  t.ok(timingSafeEqualStr('', ''))
})

t.test(
  'uuidV7: version 7, the variant, the time first, so ids sort by the time they were made',
  async (t) => {
    const at = Date.UTC(2026, 10, 27, 12, 0, 0, 123)
    const id = uuidV7(at)
    t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    t.equal(parseInt(id.replace(/-/g, '').slice(0, 12), 16), at, 'the first 48 bits are the milliseconds')
    t.not(uuidV7(at), id, 'the rest is random')
    const ids = [at + 2, at, at + 1, at + 1000].map((ms) => uuidV7(ms))
    t.same([...ids].sort(), [ids[1], ids[2], ids[0], ids[3]])
  },
)
