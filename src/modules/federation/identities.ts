import type { Transaction } from 'kysely'
import { tdb, type AppContext } from '../../context.js'
import type { Database } from '../../db/database.js'
import { fail } from '../../errors.js'
import { randomToken, sha256Hex } from '../../lib/tokens.js'
import { assertNotOwnUser, type Principal, type UserPrincipal } from '../../security/principal.js'
import { audited } from '../audit/audited.js'
import type { RequestMeta } from '../audit/write.js'
import { assertMayActOnUser } from '../permissions/hierarchy.js'
import { credentialsOf } from '../passkeys/queries.js'
import { findUserById, lockUserPassword, NO_PASSWORD } from '../users/queries.js'
import * as q from './queries.js'

// A person's own links to other providers, and an administrator's view of them (contract section 24, "A
// person's own links"): listing, the link token that `intent=link` takes, and unlinking, never of the last way
// into an account.

const LINK_TOKEN_SECONDS = 60

type IdentityRow = Awaited<ReturnType<typeof q.listIdentities>>[number]

const toDto = (r: IdentityRow) => ({
  id: r.id,
  providerId: r.provider_id,
  providerName: r.provider_name,
  subject: r.subject,
  email: r.email,
  createdAt: new Date(r.created_at).toISOString(),
})

/** GET /me/identities: the calling user's linked identities. */
export async function listMyIdentities(ctx: AppContext, actor: UserPrincipal) {
  return { items: (await q.listIdentities(tdb(ctx, actor), actor.tenantId, actor.userId)).map(toDto) }
}

/** POST /me/identities/link-token: a single-use token (60 s) for the authorize step's `intent=link`. */
export async function createMyIdentityLinkToken(ctx: AppContext, actor: UserPrincipal) {
  const linkToken = randomToken(32)
  await q.insertLinkToken(tdb(ctx, actor), {
    tenantId: actor.tenantId,
    userId: actor.userId,
    hash: sha256Hex(linkToken),
    expiresAt: new Date(ctx.clock.now() + LINK_TOKEN_SECONDS * 1000),
  })
  return { linkToken, expiresIn: LINK_TOKEN_SECONDS as 60 }
}

/**
 * Unlinks one identity in `trx`, the user's row locked first so two unlinks at once cannot both pass the check:
 * refused while it is the last way in (no password, no passkey, no other identity).
 */
async function unlink(trx: Transaction<Database>, tenantId: string, userId: string, id: string) {
  const user = (await lockUserPassword(trx, tenantId, userId)) ?? fail('USER_NOT_FOUND')
  const identities = await q.listIdentities(trx, tenantId, userId)
  if (!identities.some((i) => i.id === id)) fail('NOT_FOUND')
  const others =
    identities.length > 1 ||
    user.password_hash !== NO_PASSWORD ||
    (await credentialsOf(trx, tenantId, userId)).length > 0
  if (!others) fail('LAST_SIGN_IN_METHOD')
  await q.deleteIdentity(trx, tenantId, userId, id)
  return { id, deleted: true as const }
}

/** DELETE /me/identities/:id: the calling user unlinks an identity. One IDENTITY_UNLINKED row, failures included. */
export function deleteMyIdentity(ctx: AppContext, actor: UserPrincipal, id: string, meta: RequestMeta) {
  const { tenantId, userId } = actor
  return audited(
    tdb(ctx, actor),
    { tenantId, action: 'IDENTITY_UNLINKED', actor, meta, note: { userId, metadata: { identityId: id } } },
    { act: (trx) => unlink(trx, tenantId, userId, id) },
  )
}

/** GET /users/:userId/identities: a user's linked identities, for administrators (`users:read`). */
export async function listUserIdentities(ctx: AppContext, actor: Principal, userId: string) {
  const db = tdb(ctx, actor)
  if (!(await findUserById(db, actor.tenantId, userId))) fail('USER_NOT_FOUND')
  return { items: (await q.listIdentities(db, actor.tenantId, userId)).map(toDto) }
}

/**
 * DELETE /users/:userId/identities/:id: an administrator unlinks a user's identity. Never the user the credential
 * stands for (FORBIDDEN); hierarchy rule. One IDENTITY_UNLINKED row, failures included.
 */
export function deleteUserIdentity(
  ctx: AppContext,
  actor: Principal,
  userId: string,
  id: string,
  meta: RequestMeta,
) {
  const { tenantId } = actor
  return audited(
    tdb(ctx, actor),
    {
      tenantId,
      action: 'IDENTITY_UNLINKED',
      actor,
      meta,
      note: { userId: null, metadata: { identityId: id } },
    },
    {
      before: async () => {
        // Why every kind of credential: a stolen token, or a key made with it, must not strip its own user's
        // ways in; DELETE /me/identities/{id} asks for a recent sign-in (contract section 22).
        assertNotOwnUser(actor, userId, 'Unlink your own identities with DELETE /me/identities/{id}')
      },
      act: async (trx, note) => {
        if (!(await findUserById(trx, tenantId, userId))) fail('USER_NOT_FOUND')
        note.userId = userId
        await assertMayActOnUser(trx, actor, { tenantId, userId, isPlatform: actor.isPlatform })
        return unlink(trx, tenantId, userId, id)
      },
    },
  )
}
