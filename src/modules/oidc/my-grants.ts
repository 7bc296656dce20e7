import type { AppContext } from '../../context.js'
import { fail } from '../../errors.js'
import type { UserPrincipal } from '../../security/principal.js'
import { oauthClientNames } from '../oauth-clients/queries.js'
import { deleteAccountClientPayloads, listAccountGrants } from './payload-queries.js'

// A user's own view of the applications they authorized (contract section 23, "Users' own view").

interface GrantPayload {
  clientId?: string
  iat?: number
  openid?: { scope?: string }
}

/** GET /me/oauth/grants: one entry per application, with the scopes granted and when. */
export async function listMyOAuthGrants(ctx: AppContext, me: UserPrincipal) {
  const db = ctx.dbs.forTenant(me.tenantId)
  const rows = await listAccountGrants(db, me.tenantId, me.userId, new Date(ctx.clock.now()))
  const grants = rows.map((r) => r.payload as GrantPayload)
  // Why one statement for the names: a user may have authorized many applications (no query per grant).
  const names = await oauthClientNames(db, me.tenantId, [
    ...new Set(grants.flatMap((g) => (g.clientId ? [g.clientId] : []))),
  ])
  const items = []
  const seen = new Set<string>()
  for (const p of grants) {
    const name = p.clientId ? names.get(p.clientId) : undefined
    if (!p.clientId || name === undefined || seen.has(p.clientId)) continue
    seen.add(p.clientId)
    items.push({
      clientId: p.clientId,
      name,
      scopes: (p.openid?.scope ?? '').split(' ').filter((s) => s !== ''),
      createdAt: new Date((p.iat ?? 0) * 1000).toISOString(),
    })
  }
  return { items }
}

/** DELETE /me/oauth/grants/:clientId: the application's grants and tokens of this user end at once. */
export async function revokeMyOAuthGrant(ctx: AppContext, me: UserPrincipal, clientId: string) {
  const gone = await deleteAccountClientPayloads(
    ctx.dbs.forTenant(me.tenantId),
    me.tenantId,
    me.userId,
    clientId,
  )
  if (gone === 0) fail('OAUTH_CLIENT_NOT_FOUND')
  return { clientId, revoked: true as const }
}
