import type { Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { Database } from '../../db/database.js'
import { fail } from '../../errors.js'
import {
  newKeyPair,
  newRsaKeyPair,
  publicJwk,
  publicRsaJwk,
  sealPrivateKey,
  type AsymmetricAlgorithm,
  type SigningAlgorithm,
} from '../../security/asymmetric.js'
import { DEFAULT_KID } from '../../security/keystore.js'
import { asObject } from '../../lib/json-object.js'
import { newKid } from '../../lib/tokens.js'
import { findTenantMetadata, lockTenant, setTenantMetadata } from './queries.js'
import {
  deleteRetiredKeyPairs,
  findCurrentSecretId,
  hasCurrentKeyPair,
  insertKeyPair,
  retireCurrentKeyPair,
} from './secret-queries.js'
import { generateJwtSecret, SECRET_OVERLAP_MS } from './secrets.js'

// Asymmetric signing keys of a tenant (`signingAlgorithm` EdDSA or ES256; docs/decisions.md D14): the
// current key pair, and the one key (pair or HS256 secret) it replaced, for 7 days.

/**
 * Makes a new key pair the tenant's current one, inside the caller's transaction (the tenant row locked):
 * the current pair, if any, is retired for 7 days and every older one deleted, so only the new key and
 * the one it replaced verify. `previousSecret` names the HS256 secret to honour for 7 days (a switch from
 * HS256), or null.
 */
async function installKeyPair(
  ctx: AppContext,
  trx: Transaction<Database>,
  tenantId: string,
  alg: AsymmetricAlgorithm,
  previousSecret: string | null,
): Promise<void> {
  const nowMs = ctx.clock.now()
  await retireKeyPairs(trx, tenantId, nowMs)
  const kid = newKid()
  const { privateKey, publicKey } = newKeyPair(alg)
  await insertKeyPair(trx, {
    tenant_id: tenantId,
    kid,
    algorithm: alg,
    private_key_enc: sealPrivateKey(privateKey, ctx.secretsKey, tenantId, kid),
    public_jwk: JSON.stringify(await publicJwk(publicKey, kid, alg)),
    created_at: new Date(nowMs),
  })
  await setPreviousSecret(
    trx,
    tenantId,
    previousSecret
      ? { kid: previousSecret, expiresAt: new Date(nowMs + SECRET_OVERLAP_MS).toISOString() }
      : null,
  )
}

/** Deletes the retired key pairs and retires the current one for 7 days. */
async function retireKeyPairs(trx: Transaction<Database>, tenantId: string, nowMs: number): Promise<void> {
  await deleteRetiredKeyPairs(trx, tenantId)
  await retireCurrentKeyPair(trx, tenantId, new Date(nowMs), new Date(nowMs + SECRET_OVERLAP_MS))
}

/** Records (or clears) the HS256 secret an asymmetric tenant still honours: `tenants.metadata.signing`. */
async function setPreviousSecret(
  trx: Transaction<Database>,
  tenantId: string,
  previousSecret: { kid: string; expiresAt: string } | null,
): Promise<void> {
  const row = await findTenantMetadata(trx, tenantId)
  const metadata = asObject(row?.metadata)
  await setTenantMetadata(trx, tenantId, { ...metadata, signing: { previousSecret } })
}

/** The kid of the tenant's current HS256 secret (or the service default's). */
async function currentSecretKid(trx: Transaction<Database>, tenantId: string): Promise<string> {
  const row = await findCurrentSecretId(trx, tenantId)
  return row?.kid ?? DEFAULT_KID
}

/**
 * Applies a change of `signingAlgorithm` inside the config update's transaction: to EdDSA or ES256, a new
 * key pair (the former pair, or the HS256 secret, verifying for 7 more days); back to HS256, the pair is
 * retired for 7 days and the tenant's secret signs again.
 */
export async function switchSigningAlgorithm(
  ctx: AppContext,
  trx: Transaction<Database>,
  tenantId: string,
  from: SigningAlgorithm,
  to: SigningAlgorithm,
): Promise<void> {
  if (from === to) return
  if (to === 'HS256') {
    await retireKeyPairs(trx, tenantId, ctx.clock.now())
    await setPreviousSecret(trx, tenantId, null)
    return
  }
  await installKeyPair(
    ctx,
    trx,
    tenantId,
    to,
    from === 'HS256' ? await currentSecretKid(trx, tenantId) : null,
  )
}

/** The first key pair of a tenant created asymmetric: no former key to honour. */
export function installFirstKeyPair(
  ctx: AppContext,
  trx: Transaction<Database>,
  tenantId: string,
  alg: AsymmetricAlgorithm,
): Promise<void> {
  return installKeyPair(ctx, trx, tenantId, alg, null)
}

/**
 * Makes the OpenID provider's RS256 pair the tenant's current one (contract section 23), inside the caller's
 * transaction: the former one verifies for 7 days, every older one is deleted.
 */
async function installOidcKey(ctx: AppContext, trx: Transaction<Database>, tenantId: string): Promise<void> {
  const nowMs = ctx.clock.now()
  await deleteRetiredKeyPairs(trx, tenantId, 'oidc')
  await retireCurrentKeyPair(trx, tenantId, new Date(nowMs), new Date(nowMs + SECRET_OVERLAP_MS), 'oidc')
  const kid = newKid()
  const { privateKey, publicKey } = newRsaKeyPair()
  await insertKeyPair(trx, {
    tenant_id: tenantId,
    kid,
    algorithm: 'RS256',
    purpose: 'oidc',
    private_key_enc: sealPrivateKey(privateKey, ctx.secretsKey, tenantId, kid),
    public_jwk: JSON.stringify(await publicRsaJwk(publicKey, kid)),
    created_at: new Date(nowMs),
  })
}

/** The tenant's OpenID provider key, made when first needed (two instances racing make one: the row lock). */
export async function ensureOidcKey(ctx: AppContext, tenantId: string): Promise<void> {
  if ((await ctx.keystore.oidcKeys(tenantId)).current) return
  await ctx.dbs.main.transaction().execute(async (trx) => {
    if (!(await lockTenant(trx, tenantId))) fail('TENANT_NOT_FOUND')
    if (!(await hasCurrentKeyPair(trx, tenantId, 'oidc'))) await installOidcKey(ctx, trx, tenantId)
  })
  await ctx.changed({ signing: tenantId })
}

/**
 * GET /tenants/me/signing-keys: the current key and the one it replaced while that one verifies, and the
 * OpenID provider's (made now if it was not yet).
 */
export async function getSigningKeys(ctx: AppContext, tenantId: string) {
  await ensureOidcKey(ctx, tenantId)
  const oidc = (await ctx.keystore.oidcState(tenantId)) ?? fail('TENANT_NOT_FOUND')
  return { ...(await ctx.keystore.state(tenantId)), oidc }
}

/**
 * POST /tenants/me/signing-keys/rotate: a new key pair for an EdDSA or ES256 tenant, a new secret for an
 * HS256 one; the replaced key verifies for 7 days, every older one stops at once.
 */
export async function rotateSigningKey(ctx: AppContext, tenantId: string) {
  const tenant = (await ctx.tenants.byId(tenantId)) ?? fail('TENANT_NOT_FOUND')
  const alg = tenant.authConfig.signingAlgorithm
  if (alg === 'HS256') {
    await generateJwtSecret(ctx, tenantId)
  }
  // The OpenID provider's RS256 pair rotates with the access tokens' key, with the same overlap.
  await ctx.dbs.main.transaction().execute(async (trx) => {
    if (!(await lockTenant(trx, tenantId))) fail('TENANT_NOT_FOUND')
    if (alg !== 'HS256') await installKeyPair(ctx, trx, tenantId, alg, null)
    await installOidcKey(ctx, trx, tenantId)
  })
  await ctx.changed({ signing: tenantId })
  return getSigningKeys(ctx, tenantId)
}
