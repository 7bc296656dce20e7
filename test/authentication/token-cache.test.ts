import t from 'tap'
import { AccessTokenVerifier } from '../../src/security/access-token.js'
import type { Keystore } from '../../src/security/keystore.js'
import type { TenantInfo } from '../../src/context.js'
import type { TenantCache } from '../../src/modules/tenants/cache.js'
import { signJwt } from '../../src/lib/jwt.js'

// The verifier's memory of verified tokens, without a database: the tenant cache and keystore are
// stand-ins whose answers the tests change between uses.
const NOW = 1_700_000_000_000
const secretA = Buffer.from('tenant-secret-a-of-at-least-32-bytes!!', 'utf8')
const secretB = Buffer.from('tenant-secret-b-of-at-least-32-bytes!!', 'utf8')

function setup() {
  const state = { status: 'ACTIVE' as TenantInfo['status'], secret: secretA as Buffer | null }
  const tenants = {
    byId: async (id: string) => ({ id, code: 'acme', name: 'Acme', status: state.status, isPlatform: false }),
  } as unknown as TenantCache
  const keystore = {
    verificationKey: async () => (state.secret ? { alg: 'HS256', secret: state.secret } : null),
  } as unknown as Keystore
  const verifier = new AccessTokenVerifier(keystore, tenants)
  const remembered = (token: string) =>
    (verifier as unknown as { verified: Map<string, unknown> }).verified.has(token)
  return { state, verifier, remembered }
}

const token = (n: number, extra: object = {}) =>
  signJwt(
    {
      sub: `u${n}`,
      userId: `u${n}`,
      tenantId: 't1',
      tenantCode: 'acme',
      roles: ['user'],
      permissions: ['users:read'],
      sid: `s${n}`,
      iat: NOW / 1000,
      exp: NOW / 1000 + 900,
      ...extra,
    },
    secretA,
    'kid-a',
  )

const code = async (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err: { code?: string }) => err.code,
  )

t.test('a remembered token is refused once the secret behind its kid changes or goes', async (t) => {
  const { state, verifier, remembered } = setup()
  const tk = token(1)
  t.equal((await verifier.verify(tk, NOW)).userId, 'u1')
  t.ok(remembered(tk))
  state.secret = secretB
  t.equal(await code(verifier.verify(tk, NOW)), 'UNAUTHORIZED', 'another secret under the same kid')
  t.notOk(remembered(tk), 'and forgotten')
  state.secret = secretA
  t.equal(await code(verifier.verify(tk, NOW)), 'ok', 'verified afresh')
  state.secret = null
  t.equal(await code(verifier.verify(tk, NOW)), 'UNAUTHORIZED', 'kid no longer honoured')
})

t.test('a remembered token: TOKEN_EXPIRED at exp, UNAUTHORIZED for an inactive tenant', async (t) => {
  const { state, verifier, remembered } = setup()
  const tk = token(2)
  t.equal(await code(verifier.verify(tk, NOW)), 'ok')
  state.status = 'INACTIVE'
  t.equal(await code(verifier.verify(tk, NOW)), 'UNAUTHORIZED')
  state.status = 'ACTIVE'
  t.equal(await code(verifier.verify(tk, NOW + 899_000)), 'ok')
  t.equal(await code(verifier.verify(tk, NOW + 900_000)), 'TOKEN_EXPIRED')
  t.notOk(remembered(tk))
})

t.test('tokens of an inactive tenant and refused tokens are not remembered', async (t) => {
  const { state, verifier, remembered } = setup()
  state.status = 'INACTIVE'
  const tk = token(3)
  t.equal(await code(verifier.verify(tk, NOW)), 'UNAUTHORIZED')
  t.notOk(remembered(tk))
  state.status = 'ACTIVE'
  const [, payload = ''] = tk.split('.')
  const forged = signJwt({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()) }, secretB, 'kid-a')
  t.equal(await code(verifier.verify(forged, NOW)), 'UNAUTHORIZED')
  t.notOk(remembered(forged))
})

t.test('least recently used tokens are forgotten first; the count is bounded', async (t) => {
  const { verifier, remembered } = setup()
  const first = token(0)
  await verifier.verify(first, NOW)
  for (let i = 1; i < 2000; i++) await verifier.verify(token(i), NOW)
  await verifier.verify(first, NOW) // used again: now the most recent
  await verifier.verify(token(2000), NOW) // one over the bound
  t.ok(remembered(first), 'the token used again stays')
  t.notOk(remembered(token(1)), 'the least recently used one went')
  t.ok(remembered(token(2000)))
})

t.test('the remembered token text is bounded too (large tokens)', async (t) => {
  const { verifier, remembered } = setup()
  const big = (n: number) => token(n, { permissions: Array.from({ length: 600 }, (_, i) => `res${i}:read`) })
  const first = big(0)
  await verifier.verify(first, NOW)
  for (let i = 1; i < 1000; i++) await verifier.verify(big(i), NOW)
  t.notOk(remembered(first), 'evicted by size long before the count bound')
  t.ok(remembered(big(999)))
})
