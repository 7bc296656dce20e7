import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from '../../db/database.js'
import {
  grantsFrom,
  userAndGrants,
  type GrantRow,
  type Grants,
  type UserJson,
} from '../../security/grants.js'

// A user's effective grants in one statement (the rule that turns rows into grants is src/security/grants.ts).
// Why here, reading the roles module's tables too: one round trip on the hot paths (login, refresh, GET /me)
// reads user_roles, roles, role_permissions, permissions and user_permissions at once.

/**
 * The grant rows of one user as parts of a statement: the `ur` CTE and the union of selects after it.
 * `user` is SQL for the user's id: a parameter, or a subquery of a larger statement (a refresh reads
 * the grants in the same statement that rotates the token). Rows: the user's roles with their levels,
 * role grants, direct grants, and for the built-in admin role every permission of the tenant.
 */
export function grantQueryParts(tenantId: string, user: RawBuilder<unknown>) {
  return {
    cte: sql`ur as (
      select r.id, r.name, r.level, r.is_system
      from user_roles x join roles r on r.id = x.role_id
      where x.user_id = ${user} and x.tenant_id = ${tenantId}
    )`,
    selects: sql`
    select 'role' as kind, ur.name as role, ur.name as name, ur.level as level from ur
    union all
    select 'rp', ur.name, p.name, 0 from ur
      join role_permissions rp on rp.role_id = ur.id join permissions p on p.id = rp.permission_id
    union all
    select 'direct', null, p.name, 0 from user_permissions up join permissions p on p.id = up.permission_id
      where up.user_id = ${user} and up.tenant_id = ${tenantId}
    union all
    select 'all', null, p.name, 0 from permissions p
      where exists (select 1 from ur where ur.is_system and ur.name = 'admin')
        and (p.tenant_id is null or p.tenant_id = ${tenantId})`,
  }
}

/**
 * The user row itself (every column but the password hash) as a `kind = 'user'` grant row, its JSON text in
 * `name`, followed by `union all`: to put before grantQueryParts' selects. `user` as in grantQueryParts.
 */
export function userRowPart(tenantId: string, user: RawBuilder<unknown>) {
  return sql`select 'user' as kind, null as role, row_to_json(u)::text as name, 0 as level from (
        select id, tenant_id, email, username, cpf_cnpj, status, email_verified, otp_enabled,
               created_at, updated_at, last_login_at
        from users where tenant_id = ${tenantId} and id = ${user}) u
      union all`
}

/**
 * One round trip for roles, rank and effective permissions, plus, when asked, the user row itself as
 * JSON (GET /me needs both and is on the hot path).
 */
function grantRows(db: Kysely<Database>, tenantId: string, userId: string, withUser: boolean) {
  const userRow = withUser ? userRowPart(tenantId, sql`${userId}`) : sql``
  const { cte, selects } = grantQueryParts(tenantId, sql`${userId}`)
  return sql<GrantRow>`with ${cte} ${userRow} ${selects}`.execute(db)
}

/** Computes roles, rank and effective permissions of one user in one round trip. */
export async function loadGrants(
  db: Kysely<Database>,
  tenantId: string,
  userId: string,
  isPlatform: boolean,
): Promise<Grants> {
  return grantsFrom((await grantRows(db, tenantId, userId, false)).rows, isPlatform)
}

/** The user row (no password hash; timestamps as ISO strings) and its grants, in one round trip. */
export async function loadUserWithGrants(
  db: Kysely<Database>,
  tenantId: string,
  userId: string,
  isPlatform: boolean,
): Promise<{ user: UserJson | null; grants: Grants }> {
  return userAndGrants<UserJson>((await grantRows(db, tenantId, userId, true)).rows, isPlatform)
}
