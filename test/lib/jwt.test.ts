import { createHmac } from 'node:crypto'
import t from 'tap'
import {
  decodeJwtUnverified,
  MAX_JWT_LENGTH,
  signJwt,
  verifyJwt,
  verifyJwtSignature,
  type SecretResolver,
} from '../../src/lib/jwt.js'

const secret = Buffer.from('a-tenant-secret-of-at-least-32-bytes!!', 'utf8')
const other = Buffer.from('another-secret-of-at-least-32-bytes!!!', 'utf8')
const nowMs = 1_700_000_000_000
const now = nowMs / 1000
const claims = { sub: 'u1', tenantId: 't1', iat: now, exp: now + 900 }
const bySecret =
  (s: Buffer | null): SecretResolver =>
  () =>
    s

const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url')
/** Builds a token from raw parts, HMAC-signed with `key` (or with the given signature text). */
function forge(header: unknown, payload: unknown, key: Buffer | string | null): string {
  const input = `${b64(header)}.${b64(payload)}`
  const sig = key === null ? '' : createHmac('sha256', key).update(input).digest('base64url')
  return `${input}.${sig}`
}

t.test('round trip: sign, decode, verify', async (t) => {
  const token = signJwt(claims, secret, 'k1')
  const d = decodeJwtUnverified(token)
  t.same(d?.header, { alg: 'HS256', typ: 'JWT', kid: 'k1' })
  t.same(d?.payload, claims)
  t.ok(verifyJwtSignature(token, secret))
  t.ok(verifyJwtSignature(token, secret.toString('utf8')), 'string secret = its UTF-8 bytes')
  const r = verifyJwt(token, bySecret(secret), nowMs)
  t.ok(r.ok)
  if (r.ok) {
    t.equal(r.header.kid, 'k1')
    t.same(r.payload, claims)
  }
})

t.test('the resolver sees the unverified kid and payload', async (t) => {
  const token = signJwt(claims, secret, 'k1')
  let seen: unknown
  verifyJwt(
    token,
    (h, p) => {
      seen = [h.kid, p.tenantId]
      return secret
    },
    nowMs,
  )
  t.same(seen, ['k1', 't1'])
})

t.test('alg other than HS256 is refused as alg', async (t) => {
  const none = forge({ alg: 'none', typ: 'JWT', kid: 'k1' }, claims, null)
  t.same(verifyJwt(none, bySecret(secret), nowMs), { ok: false, reason: 'alg' }, 'alg none, empty signature')
  const noneSigned = forge({ alg: 'none', typ: 'JWT', kid: 'k1' }, claims, secret)
  t.same(verifyJwt(noneSigned, bySecret(secret), nowMs), { ok: false, reason: 'alg' }, 'alg none, valid HMAC')
  const hs512 = forge({ alg: 'HS512', typ: 'JWT', kid: 'k1' }, claims, secret)
  t.same(verifyJwt(hs512, bySecret(secret), nowMs), { ok: false, reason: 'alg' })
  const rs256 = forge({ alg: 'RS256', typ: 'JWT', kid: 'k1' }, claims, secret)
  t.same(verifyJwt(rs256, bySecret(secret), nowMs), { ok: false, reason: 'alg' })
  const missing = forge({ typ: 'JWT', kid: 'k1' }, claims, secret)
  t.same(verifyJwt(missing, bySecret(secret), nowMs), { ok: false, reason: 'alg' })
  const lower = forge({ alg: 'hs256', typ: 'JWT', kid: 'k1' }, claims, secret)
  t.same(verifyJwt(lower, bySecret(secret), nowMs), { ok: false, reason: 'alg' })
})

t.test('kid must be a non-empty string the resolver knows', async (t) => {
  const noKid = forge({ alg: 'HS256', typ: 'JWT' }, claims, secret)
  t.same(verifyJwt(noKid, bySecret(secret), nowMs), { ok: false, reason: 'kid' })
  const empty = forge({ alg: 'HS256', typ: 'JWT', kid: '' }, claims, secret)
  t.same(verifyJwt(empty, bySecret(secret), nowMs), { ok: false, reason: 'kid' })
  const numeric = forge({ alg: 'HS256', typ: 'JWT', kid: 7 }, claims, secret)
  t.same(verifyJwt(numeric, bySecret(secret), nowMs), { ok: false, reason: 'kid' })
  const unknown = signJwt(claims, secret, 'k1')
  t.same(verifyJwt(unknown, bySecret(null), nowMs), { ok: false, reason: 'kid' }, 'resolver has no secret')
})

t.test('wrong secret and tampering are signature failures', async (t) => {
  const token = signJwt(claims, other, 'k1')
  t.notOk(verifyJwtSignature(token, secret))
  t.same(verifyJwt(token, bySecret(secret), nowMs), { ok: false, reason: 'signature' })

  const good = signJwt(claims, secret, 'k1')
  const [h, , s] = good.split('.')
  const tampered = `${h}.${b64({ ...claims, sub: 'admin' })}.${s}`
  t.same(verifyJwt(tampered, bySecret(secret), nowMs), { ok: false, reason: 'signature' })
  const flipped = good.slice(0, -2) + (good.at(-2) === 'A' ? 'B' : 'A') + good.at(-1)
  t.same(verifyJwt(flipped, bySecret(secret), nowMs), { ok: false, reason: 'signature' })
  const shortened = good.slice(0, -3)
  t.same(
    verifyJwt(shortened, bySecret(secret), nowMs),
    { ok: false, reason: 'signature' },
    '40-character signature',
  )
})

t.test('expiry is judged only after a valid signature', async (t) => {
  const expired = { ...claims, iat: now - 1000, exp: now - 100 }
  t.same(verifyJwt(signJwt(expired, secret, 'k1'), bySecret(secret), nowMs), { ok: false, reason: 'expired' })
  t.same(
    verifyJwt(signJwt(expired, other, 'k1'), bySecret(secret), nowMs),
    { ok: false, reason: 'signature' },
    'forged and expired is a signature failure',
  )
  const atExp = { ...claims, exp: now }
  t.same(
    verifyJwt(signJwt(atExp, secret, 'k1'), bySecret(secret), nowMs),
    { ok: false, reason: 'expired' },
    'at exp',
  )
  const justBefore = { ...claims, exp: now + 1 }
  t.ok(verifyJwt(signJwt(justBefore, secret, 'k1'), bySecret(secret), nowMs).ok)
})

t.test('time claims: exp and iat required, a day at most, iat/nbf not beyond 60 s ahead', async (t) => {
  const v = (p: object) => verifyJwt(signJwt(p, secret, 'k1'), bySecret(secret), nowMs)
  t.same(v({ sub: 'u1' }), { ok: false, reason: 'malformed' }, 'no exp')
  t.same(v({ ...claims, exp: String(now + 900) }), { ok: false, reason: 'malformed' }, 'string exp')
  t.same(v({ ...claims, iat: now + 61 }), { ok: false, reason: 'malformed' }, 'iat 61 s ahead')
  t.ok(v({ ...claims, iat: now + 60 }).ok, 'iat 60 s ahead is skew')
  t.same(v({ ...claims, nbf: now + 61 }), { ok: false, reason: 'malformed' }, 'nbf ahead')
  t.same(v({ ...claims, iat: 'yesterday' }), { ok: false, reason: 'malformed' }, 'non-numeric iat')
  t.same(v({ sub: 'u1', exp: now + 900 }), { ok: false, reason: 'malformed' }, 'no iat')
  t.same(v({ ...claims, exp: 1e20 }), { ok: false, reason: 'malformed' }, 'exp of 10^20')
  t.same(v({ ...claims, exp: now + 86_401 }), { ok: false, reason: 'malformed' }, 'a day and a second')
  t.ok(v({ ...claims, exp: now + 86_400 }).ok, 'exactly a day')
  const bad = forge({ alg: 'HS256', typ: 'JWT', kid: 'k1' }, { sub: 'u1' }, other)
  t.same(
    verifyJwt(bad, bySecret(secret), nowMs),
    { ok: false, reason: 'signature' },
    'claims unchecked when forged',
  )
})

t.test('malformed tokens', async (t) => {
  const good = signJwt(claims, secret, 'k1')
  const [h = '', p = '', s = ''] = good.split('.')
  const header = { alg: 'HS256', typ: 'JWT', kid: 'k1' }
  const bad: Record<string, string> = {
    empty: '',
    'two parts': `${h}.${p}`,
    'four parts': `${good}.${s}`,
    'empty header': `.${p}.${s}`,
    'padded base64': `${h}.${p}==.${s}`,
    'standard base64 characters': `${h}.${p.replace(/-/g, '+')}+.${s}`,
    'non-canonical trailing bits': `${h}.${b64('{"a":1}').slice(0, -1)}z.${s}`,
    'payload not JSON': `${h}.${b64('not json')}.${s}`,
    'payload an array': forge(header, [1, 2], secret),
    'payload null': forge(header, null, secret),
    'header a string': forge('"HS256"', claims, secret),
    'typ other than JWT': forge({ ...header, typ: 'at+jwt' }, claims, secret),
    'crit header': forge({ ...header, crit: ['exp'] }, claims, secret),
    oversized: forge(header, { ...claims, pad: 'x'.repeat(MAX_JWT_LENGTH) }, secret),
  }
  for (const [name, token] of Object.entries(bad)) {
    t.same(verifyJwt(token, bySecret(secret), nowMs), { ok: false, reason: 'malformed' }, name)
  }
  t.equal(decodeJwtUnverified(`${h}.${p}`), null)
  t.notOk(verifyJwtSignature('abc', secret))
  t.notOk(verifyJwtSignature(`${h}.${p}.${s}x`, secret), 'signature of the wrong length')
})
