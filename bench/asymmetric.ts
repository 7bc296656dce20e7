// The offline-verification figures of `make bench`: tenants that sign with EdDSA and ES256 (key pairs
// written straight to the database, as the config switch would), and what signing and verifying one
// token costs in-process for each algorithm, HS256 through our own lib/jwt.ts and through `jose`.
import { createSecretKey } from 'node:crypto'
import type { Kysely } from 'kysely'
import { jwtVerify, SignJWT } from 'jose'
import type { Database } from '../src/db/database.js'
import { deriveKey } from '../src/lib/crypto-box.js'
import { signJwt, verifyJwt } from '../src/lib/jwt.js'
import {
  newKeyPair,
  publicJwk,
  sealPrivateKey,
  signAsymmetric,
  verifyAsymmetricSignature,
  type AsymmetricAlgorithm,
} from '../src/security/asymmetric.js'
import { provisionTenant } from '../src/modules/tenants/provision.js'

/** A tenant signing with `alg`, with one user (password hash `hash`); its code is `bench-<alg>`. */
export async function seedAsymmetricTenant(
  db: Kysely<Database>,
  alg: AsymmetricAlgorithm,
  hash: string,
  secretsKey: string,
): Promise<{ code: string; email: string }> {
  const code = `bench-${alg.toLowerCase()}`
  const { tenant } = await provisionTenant(db, {
    code,
    name: code,
    authConfig: {
      signingAlgorithm: alg,
      rateLimits: { requestsPerMinute: 10_000_000, loginPerMinute: 10_000_000 },
    },
  })
  const kid = `bench-${alg}`
  const { privateKey, publicKey } = newKeyPair(alg)
  await db
    .insertInto('tenant_signing_keys')
    .values({
      tenant_id: tenant.id,
      kid,
      algorithm: alg,
      private_key_enc: sealPrivateKey(privateKey, deriveKey(secretsKey), tenant.id, kid),
      public_jwk: JSON.stringify(await publicJwk(publicKey, kid, alg)),
    })
    .execute()
  const email = `${code}@example.test`
  await db.insertInto('users').values({ tenant_id: tenant.id, email, password_hash: hash }).execute()
  return { code, email }
}

/** Operations per second of `fn` over about `ms` milliseconds. */
async function perSecond(fn: () => unknown, ms = 1000): Promise<number> {
  let n = 0
  const start = performance.now()
  while (performance.now() - start < ms) {
    await fn()
    n++
  }
  return n / ((performance.now() - start) / 1000)
}

/** In-process signing and verification rates per algorithm (one core), printed as a table. */
export async function signingCosts(): Promise<void> {
  const nowS = Math.floor(Date.now() / 1000)
  const claims = {
    sub: 'u',
    tenantId: 't',
    roles: ['user'],
    permissions: ['users:read'],
    iat: nowS,
    exp: nowS + 900,
  }
  const secret = Buffer.alloc(32, 7)
  const hs = signJwt(claims, secret, 'k')
  const joseSecret = createSecretKey(secret)
  const joseHs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: 'k' }).sign(joseSecret)
  const rows: [string, number, number][] = [
    [
      'HS256 (src/lib/jwt.ts)',
      await perSecond(() => signJwt(claims, secret, 'k')),
      await perSecond(() => verifyJwt(hs, () => secret, Date.now())),
    ],
    [
      'HS256 (jose)',
      await perSecond(() =>
        new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: 'k' }).sign(joseSecret),
      ),
      await perSecond(() => jwtVerify(joseHs, joseSecret, { algorithms: ['HS256'] })),
    ],
  ]
  for (const alg of ['EdDSA', 'ES256'] as const) {
    const { privateKey, publicKey } = newKeyPair(alg)
    const key = { alg, kid: 'k', privateKey }
    const token = await signAsymmetric(claims, key)
    rows.push([
      `${alg} (jose)`,
      await perSecond(() => signAsymmetric(claims, key)),
      await perSecond(() => verifyAsymmetricSignature(token, publicKey, alg)),
    ])
  }
  console.log('\nSigning and verifying one access token in-process (one core):')
  for (const [name, sign, verify] of rows) {
    console.log(
      `  ${name.padEnd(24)} sign ${sign.toFixed(0).padStart(7)}/s (${(1000 / sign).toFixed(3)} ms)   verify ${verify.toFixed(0).padStart(7)}/s`,
    )
  }
}
