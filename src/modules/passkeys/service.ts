import { tdb, type AppContext } from '../../context.js'
import { fail } from '../../errors.js'
import { sha256Hex } from '../../lib/tokens.js'
import { assertNotOwnUser, type Principal, type UserPrincipal } from '../../security/principal.js'
import type { PageParams } from '../../db/paginate.js'
import type { components } from '../../../generated/openapi.js'
import { audited } from '../audit/audited.js'
import type { RequestMeta } from '../audit/write.js'
import { assertMayActOnUser } from '../permissions/hierarchy.js'
import { findUserById, lockUser } from '../users/queries.js'
import { accountName } from '../otp/factor.js'
import { webauthnOf } from './config.js'
import {
  credentialsOf,
  deletePasskey,
  insertChallenge,
  insertPasskey,
  listPasskeys,
  renamePasskey,
  takeChallenge,
} from './queries.js'
import {
  CHALLENGE_MS,
  challengeOf,
  newChallenge,
  registrationOptions,
  verifyRegistration,
} from './webauthn.js'

// A user's passkeys: registration (two steps), listing, renaming and removal, by the user under /me and by
// administrators under /users/{userId} (openapi/paths/passkeys.yaml).

type PasskeyRow = {
  id: string
  name: string
  created_at: Date | string
  last_used_at: Date | string | null
  backed_up: boolean
  transports: string[]
}

const iso = (d: Date | string) => new Date(d).toISOString()

/** A passkey as the API shows it: never its public key or credential id. */
function toPasskeyDto(r: PasskeyRow) {
  return {
    id: r.id,
    name: r.name,
    createdAt: iso(r.created_at),
    lastUsedAt: r.last_used_at === null ? null : iso(r.last_used_at),
    backedUp: r.backed_up,
    transports: r.transports,
  }
}

/** The caller's tenant and its passkey settings; 409 PASSKEYS_DISABLED while they are off. */
async function settingsOf(ctx: AppContext, tenantId: string) {
  // Why PASSKEYS_DISABLED for a missing tenant: a credential of a deleted tenant does not get this far.
  const tenant = (await ctx.tenants.byId(tenantId)) ?? fail('PASSKEYS_DISABLED')
  return { tenant, cfg: webauthnOf(tenant) }
}

/**
 * POST /me/passkeys/options: creation options with a new challenge, bound to the caller for 5 minutes and
 * single-use; the caller's passkeys are excluded.
 */
export async function getPasskeyRegistrationOptions(ctx: AppContext, actor: UserPrincipal) {
  const { tenantId, userId } = actor
  const { cfg } = await settingsOf(ctx, tenantId)
  const db = tdb(ctx, actor)
  const user = (await findUserById(db, tenantId, userId)) ?? fail('USER_NOT_FOUND')
  const challenge = newChallenge()
  const expiresAt = new Date(ctx.clock.now() + CHALLENGE_MS)
  await insertChallenge(db, { tenantId, userId, purpose: 'register', hash: sha256Hex(challenge), expiresAt })
  const exclude = await credentialsOf(db, tenantId, userId)
  return registrationOptions(cfg, { id: userId, name: accountName(user) }, challenge, exclude)
}

/**
 * POST /me/passkeys: verifies the browser's answer against a live challenge of the caller (used up here,
 * whatever the outcome) and stores the passkey. INVALID_PASSKEY for anything that does not verify. One
 * PASSKEY_ADDED row, success or failure.
 */
export function registerMyPasskey(
  ctx: AppContext,
  actor: UserPrincipal,
  body: components['schemas']['RegisterPasskeyRequest'],
  meta: RequestMeta,
) {
  const { tenantId, userId } = actor
  const db = tdb(ctx, actor)
  return audited(
    db,
    { tenantId, action: 'PASSKEY_ADDED', actor, meta, note: { userId, metadata: {} } },
    {
      before: async () => {
        const { cfg } = await settingsOf(ctx, tenantId)
        if (!(await findUserById(db, tenantId, userId))) fail('USER_NOT_FOUND')
        const challenge = challengeOf(body.response.response.clientDataJSON)
        const now = new Date(ctx.clock.now())
        const live =
          challenge !== null &&
          (await takeChallenge(db, {
            tenantId,
            userId,
            purpose: 'register',
            hash: sha256Hex(challenge),
            now,
          }))
        if (!live) fail('INVALID_PASSKEY', 'Unknown, used or expired challenge')
        return (await verifyRegistration(cfg, body.response, challenge)) ?? fail('INVALID_PASSKEY')
      },
      act: async (trx, note, verified) => {
        const row = await insertPasskey(trx, { tenantId, userId, name: body.name ?? 'Passkey', ...verified })
        if (!row) fail('INVALID_PASSKEY', 'This credential is already registered')
        note.metadata.passkeyId = row.id
        return toPasskeyDto(row)
      },
    },
  )
}

/** GET /me/passkeys: the caller's passkeys, newest first. */
export async function listMyPasskeys(ctx: AppContext, actor: UserPrincipal, page: PageParams) {
  await settingsOf(ctx, actor.tenantId)
  const db = tdb(ctx, actor)
  if (!(await findUserById(db, actor.tenantId, actor.userId))) fail('USER_NOT_FOUND')
  const rows = await listPasskeys(db, actor.tenantId, actor.userId, page)
  return { ...rows, items: rows.items.map(toPasskeyDto) }
}

/** PATCH /me/passkeys/:id: a new name for one of the caller's passkeys. */
export async function renameMyPasskey(ctx: AppContext, actor: UserPrincipal, id: string, name: string) {
  await settingsOf(ctx, actor.tenantId)
  const row = await renamePasskey(tdb(ctx, actor), actor.tenantId, actor.userId, id, name)
  return toPasskeyDto(row ?? fail('PASSKEY_NOT_FOUND'))
}

/** DELETE /me/passkeys/:id: removes one of the caller's passkeys. One PASSKEY_REMOVED row. */
export function deleteMyPasskey(ctx: AppContext, actor: UserPrincipal, id: string, meta: RequestMeta) {
  const { tenantId, userId } = actor
  return audited(
    tdb(ctx, actor),
    { tenantId, action: 'PASSKEY_REMOVED', actor, meta, note: { userId, metadata: { passkeyId: id } } },
    {
      before: async () => {
        await settingsOf(ctx, tenantId)
      },
      act: async (trx) => {
        if (!(await deletePasskey(trx, tenantId, userId, id))) fail('PASSKEY_NOT_FOUND')
        return { id, deleted: true as const }
      },
    },
  )
}

/** GET /users/:userId/passkeys: a user's passkeys, for administrators (`users:read`). */
export async function listUserPasskeys(ctx: AppContext, actor: Principal, userId: string, page: PageParams) {
  await settingsOf(ctx, actor.tenantId)
  const db = tdb(ctx, actor)
  if (!(await findUserById(db, actor.tenantId, userId))) fail('USER_NOT_FOUND')
  const rows = await listPasskeys(db, actor.tenantId, userId, page)
  return { ...rows, items: rows.items.map(toPasskeyDto) }
}

/**
 * DELETE /users/:userId/passkeys/:id: an administrator removes a user's passkey (a lost device). Never the
 * user the credential stands for (FORBIDDEN); hierarchy rule. One PASSKEY_REMOVED row, failures included.
 */
export function deleteUserPasskey(
  ctx: AppContext,
  actor: Principal,
  userId: string,
  id: string,
  meta: RequestMeta,
) {
  const { tenantId } = actor
  return audited(
    tdb(ctx, actor),
    { tenantId, action: 'PASSKEY_REMOVED', actor, meta, note: { userId: null, metadata: { passkeyId: id } } },
    {
      before: async () => {
        await settingsOf(ctx, tenantId)
        // Why every kind of credential: a stolen token, or a key made with it, must not strip its own user's
        // passkeys; DELETE /me/passkeys/{id} asks for a recent sign-in (contract section 22).
        assertNotOwnUser(actor, userId, 'Remove your own passkeys with DELETE /me/passkeys/{id}')
      },
      act: async (trx, note) => {
        if (!(await lockUser(trx, tenantId, userId))) fail('USER_NOT_FOUND')
        note.userId = userId
        await assertMayActOnUser(trx, actor, { tenantId, userId, isPlatform: actor.isPlatform })
        if (!(await deletePasskey(trx, tenantId, userId, id))) fail('PASSKEY_NOT_FOUND')
        return { id, deleted: true as const }
      },
    },
  )
}
