import t from 'tap'
import { base32Decode, secretOfUri, totpAt } from '../helpers/totp.js'
import { matchingStep, newOtpSecret, setupAnswer } from '../../src/modules/otp/codes.js'

// The tests' authenticator (test/helpers/totp.ts) against RFC 6238 itself, then the service's code check
// (src/modules/otp/codes.ts) against the authenticator: the second factor's tests trust both.

const STEP_MS = 30_000

t.test('authenticator: totpAt gives the RFC 6238 Appendix B SHA-1 test vectors (8 digits)', async (t) => {
  const key = Buffer.from('12345678901234567890', 'ascii')
  const vectors: [number, string][] = [
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ]
  for (const [seconds, expected] of vectors) {
    t.equal(totpAt(key, seconds * 1000, 0, 8), expected, `T = ${seconds} s`)
  }
})

t.test(
  'authenticator: secretOfUri reads the 160-bit secret the service puts in its otpauth URI',
  async (t) => {
    const secret = newOtpSecret()
    const { otpauthUri } = await setupAnswer(secret, 'Tenant x', 'someone@example.test', new Date())
    const key = secretOfUri(otpauthUri)
    t.equal(key.length, 20, '160 bits')
    t.same(key, base32Decode(secret), 'the same bytes as the base32 secret')
    t.throws(() => secretOfUri('otpauth://hotp/x?secret=AAAA'), 'a HOTP URI is refused')
  },
)

t.test(
  'authenticator: matchingStep agrees with the authenticator: ±1 step accepted, ±2 refused, at step boundaries',
  async (t) => {
    const secret = newOtpSecret()
    const key = base32Decode(secret)
    const k = Math.floor(Date.now() / STEP_MS)
    const times = [
      k * STEP_MS,
      k * STEP_MS - 1,
      (k + 1) * STEP_MS,
      (k + 1) * STEP_MS - 1,
      k * STEP_MS + 12_345,
      (k + 7) * STEP_MS + 29_999,
      1_111_111_111_000,
      STEP_MS * 3,
    ]
    for (const now of times) {
      const step = Math.floor(now / STEP_MS)
      const inWindow = new Set([-1, 0, 1].map((d) => totpAt(key, now, d)))
      for (const drift of [-1, 0, 1]) {
        t.equal(matchingStep(secret, totpAt(key, now, drift), now), step + drift, `t=${now}: drift ${drift}`)
      }
      for (const drift of [-2, 2]) {
        const code = totpAt(key, now, drift)
        // Why: a six-digit code of another step equals one in the window once in ~10^6 draws.
        if (inWindow.has(code)) continue
        t.equal(matchingStep(secret, code, now), null, `t=${now}: drift ${drift} refused`)
      }
    }
    // The boundary itself: the last millisecond of step k-1 and the first of step k.
    const edge = k * STEP_MS
    t.equal(matchingStep(secret, totpAt(key, edge), edge - 1), k, 'a code of step k at k*30s-1 ms: next step')
    t.equal(matchingStep(secret, totpAt(key, edge - 1), edge), k - 1, 'a code of step k-1 at k*30s: previous')
    t.equal(matchingStep(secret, totpAt(key, edge, 1), edge - 1), null, 'step k+1 at k*30s-1 ms: two away')
  },
)

t.test('authenticator: matchingStep refuses anything but six digits', async (t) => {
  const secret = newOtpSecret()
  const key = base32Decode(secret)
  const now = Date.now()
  const code = totpAt(key, now)
  for (const bad of [code.slice(0, 5), `${code}0`, totpAt(key, now, 0, 8), 'abcdef', ` ${code}`, '']) {
    t.equal(matchingStep(secret, bad, now), null, JSON.stringify(bad))
  }
  const other = newOtpSecret()
  const window = new Set([-1, 0, 1].map((d) => totpAt(base32Decode(other), now, d)))
  if (!window.has(code)) t.equal(matchingStep(other, code, now), null, "another secret's code")
})
