import type { AppContext } from '../../context.js'
import { fail } from '../../errors.js'
import { DEFAULT_KID, jwtSecretContext } from '../../security/keystore.js'
import { decryptSecret, encryptSecret } from '../../lib/crypto-box.js'
import { newKid, randomToken } from '../../lib/tokens.js'
import { asObject } from '../../lib/json-object.js'
import { findTenantMetadata, lockTenant, setTenantMetadata } from './queries.js'
import {
  deleteRetiredKeyPairs,
  deleteRetiredSecrets,
  findCurrentSecret,
  findCurrentSecretId,
  insertSecret,
  retireSecret,
} from './secret-queries.js'
import { resolveAuthConfig } from '../../security/auth-config.js'

/** How long a replaced secret keeps verifying tokens (generateJwtSecret, openapi/paths/tenants.yaml). */
export const SECRET_OVERLAP_MS = 7 * 24 * 60 * 60 * 1000
const HISTORY_MAX = 50

/** `tenants.metadata.jwtSecret`: what the keystore needs about the default secret, and the history. */
interface JwtSecretMeta {
  /** Until when the service default secret still verifies this tenant's tokens (after a first rotation). */
  defaultRetiredUntil?: string | null
  /** The secret replaced last, as GET shows it while it is honoured. */
  previous?: { kid: string; expiresAt: string } | null
  /** Rotations, oldest first (bounded). */
  history?: { action: 'generate' | 'set' | 'clear'; kid: string; previousKid: string; at: string }[]
}

/** Smallest secret `set` accepts, in UTF-8 bytes (the HMAC key is the string's bytes). */
const MIN_SECRET_BYTES = 32

/**
 * The rules of `set { secret }` that the document states but its schema cannot: length in UTF-8 bytes,
 * not one character repeated, no control characters. 400 VALIDATION_ERROR naming `body.secret`.
 */
function checkedSecret(given: string | undefined): string {
  const problem = secretProblem(given)
  if (given === undefined || problem !== null) {
    fail('VALIDATION_ERROR', 'Request validation failed', [{ path: 'body.secret', message: problem }])
  }
  return given
}

function secretProblem(given: string | undefined): string | null {
  if (given === undefined) return 'is required'
  if (Buffer.byteLength(given, 'utf8') < MIN_SECRET_BYTES)
    return `must be at least ${MIN_SECRET_BYTES} bytes in UTF-8`
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001F\u007F]/.test(given)) return 'must not contain control characters'
  if (new Set(given).size === 1) return 'must not be one character repeated'
  return null
}

/** The state answered by all four secret endpoints. `secret` only for the tenant's own secret. */
export interface JwtSecretState {
  configured: boolean
  kid: string | null
  secret: string | null
  createdAt: string | null
  previous: { kid: string; expiresAt: string } | null
}

/** GET /tenants/me/jwt-secret: the current secret (decrypted) and the former one while honoured. */
export async function getJwtSecret(ctx: AppContext, tenantId: string): Promise<JwtSecretState> {
  const db = ctx.dbs.main
  const [current, tenant] = await Promise.all([
    findCurrentSecret(db, tenantId),
    findTenantMetadata(db, tenantId),
  ])
  if (!tenant) fail('TENANT_NOT_FOUND')
  const meta = asObject(tenant.metadata).jwtSecret as JwtSecretMeta | undefined
  const previous =
    meta?.previous && Date.parse(meta.previous.expiresAt) > ctx.clock.now() ? meta.previous : null
  if (!current) return { configured: false, kid: DEFAULT_KID, secret: null, createdAt: null, previous }
  return {
    configured: true,
    kid: current.kid,
    secret: decryptSecret(current.secret_enc, ctx.secretsKey, jwtSecretContext(tenantId)),
    createdAt: new Date(current.created_at).toISOString(),
    previous,
  }
}

/** POST /tenants/me/jwt-secret/generate: a new random secret becomes current (see rotateJwtSecret). */
export function generateJwtSecret(ctx: AppContext, tenantId: string): Promise<JwtSecretState> {
  return rotateJwtSecret(ctx, tenantId, 'generate')
}

/** POST /tenants/me/jwt-secret/set: the given secret becomes current (see rotateJwtSecret). */
export function setJwtSecret(ctx: AppContext, tenantId: string, secret: string): Promise<JwtSecretState> {
  return rotateJwtSecret(ctx, tenantId, 'set', secret)
}

/** POST /tenants/me/jwt-secret/clear: back on the service default secret (see rotateJwtSecret). */
export function clearJwtSecret(ctx: AppContext, tenantId: string): Promise<JwtSecretState> {
  return rotateJwtSecret(ctx, tenantId, 'clear')
}

/**
 * generate / set / clear. One transaction on the tenant row: the current secret (or the service default)
 * is retired with a 7-day overlap, the new one (encrypted with SECRETS_KEY) becomes current, and the
 * rotation is recorded in tenant metadata. Other instances see it within the keystore's 2 s cache.
 */
async function rotateJwtSecret(
  ctx: AppContext,
  tenantId: string,
  action: 'generate' | 'set' | 'clear',
  given?: string,
): Promise<JwtSecretState> {
  const secret = action === 'generate' ? randomToken(32) : action === 'set' ? checkedSecret(given) : null
  await ctx.dbs.main.transaction().execute(async (trx) => {
    const tenant = (await lockTenant(trx, tenantId)) ?? fail('TENANT_NOT_FOUND')
    const current = await findCurrentSecretId(trx, tenantId)
    // Why a no-op: clearing while on the default retires nothing, so no overlap starts.
    if (secret === null && !current) return
    const nowMs = ctx.clock.now()
    const now = new Date(nowMs)
    const until = new Date(nowMs + SECRET_OVERLAP_MS)
    const metadata = asObject(tenant.metadata)
    const meta: JwtSecretMeta = { ...(metadata.jwtSecret as JwtSecretMeta | undefined) }
    // Why every retired row: only the current secret and the one it replaces are honoured, so a rotation
    // ends every older secret at once, whatever is left of its own overlap.
    await deleteRetiredSecrets(trx, tenantId)
    // An HS256 tenant's rotation ends a key pair a switch back from EdDSA/ES256 retired, too: only the
    // key a rotation replaces keeps verifying (an asymmetric tenant keeps its pairs: they sign).
    if (resolveAuthConfig(tenant.auth_config).signingAlgorithm === 'HS256') {
      await deleteRetiredKeyPairs(trx, tenantId)
    }
    let previousKid = DEFAULT_KID
    if (current) {
      previousKid = current.kid
      await retireSecret(trx, current.id, now, until)
      // The service default secret, if it was the previous one, is now older than that: it ends too.
      meta.defaultRetiredUntil = null
    } else {
      meta.defaultRetiredUntil = until.toISOString()
    }
    let kid = DEFAULT_KID
    if (secret !== null) {
      kid = newKid()
      await insertSecret(trx, {
        tenant_id: tenantId,
        kid,
        secret_enc: encryptSecret(secret, ctx.secretsKey, jwtSecretContext(tenantId)),
        created_at: now,
      })
    } else {
      // Back on the default: it is current again, with no end.
      meta.defaultRetiredUntil = null
    }
    meta.previous = { kid: previousKid, expiresAt: until.toISOString() }
    meta.history = [...(meta.history ?? []), { action, kid, previousKid, at: now.toISOString() }].slice(
      -HISTORY_MAX,
    )
    await setTenantMetadata(trx, tenantId, { ...metadata, jwtSecret: meta })
  })
  await ctx.changed({ signing: tenantId })
  return getJwtSecret(ctx, tenantId)
}
