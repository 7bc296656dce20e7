import { sql, type Kysely } from 'kysely'
import type { Database } from '../../db/database.js'
import type { IdentifierKind } from '../../lib/identifiers.js'

/** Every user column except password_hash, which never leaves the login query. */
export const userColumns = [
  'users.id',
  'users.tenant_id',
  'users.email',
  'users.username',
  'users.cpf_cnpj',
  'users.status',
  'users.email_verified',
  'users.otp_enabled',
  'users.created_at',
  'users.updated_at',
  'users.last_login_at',
] as const

export interface UserRow {
  id: string
  tenant_id: string
  email: string | null
  username: string | null
  cpf_cnpj: string | null
  status: string
  email_verified: boolean
  otp_enabled: boolean
  created_at: Date | string
  updated_at: Date | string
  last_login_at: Date | string | null
}

/** The user a login identifier names within a tenant, with its password hash (login only). */
export function findUserForLogin(
  db: Kysely<Database>,
  tenantId: string,
  kind: IdentifierKind,
  value: string,
) {
  let q = db
    .selectFrom('users')
    .select([...userColumns, 'users.password_hash'])
    .where('users.tenant_id', '=', tenantId)
  if (kind === 'email') q = q.where(sql`lower(users.email)`, '=', value.toLowerCase())
  else if (kind === 'username') q = q.where(sql`lower(users.username)`, '=', value.toLowerCase())
  else q = q.where('users.cpf_cnpj', '=', value)
  return q.executeTakeFirst()
}

/** One user of the tenant by id (never the password hash). */
export function findUserById(db: Kysely<Database>, tenantId: string, userId: string) {
  return db
    .selectFrom('users')
    .select(userColumns)
    .where('users.tenant_id', '=', tenantId)
    .where('users.id', '=', userId)
    .executeTakeFirst()
}

/** Role names per user, for building user objects of a page in one query. */
export async function roleNamesOf(db: Kysely<Database>, tenantId: string, userIds: string[]) {
  const out = new Map<string, string[]>()
  if (userIds.length === 0) return out
  const rows = await db
    .selectFrom('user_roles')
    .innerJoin('roles', 'roles.id', 'user_roles.role_id')
    .select(['user_roles.user_id', 'roles.name'])
    .where('user_roles.tenant_id', '=', tenantId)
    .where('user_roles.user_id', 'in', userIds)
    .orderBy('roles.name')
    .execute()
  for (const r of rows) out.set(r.user_id, [...(out.get(r.user_id) ?? []), r.name])
  return out
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString())

/** The contract's user object (section 4). Never any password material. */
export function toUserDto(row: UserRow, tenantCode: string, roles: string[]) {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    tenantCode,
    email: row.email,
    username: row.username,
    cpf_cnpj: row.cpf_cnpj,
    status: row.status as 'ACTIVE' | 'INACTIVE' | 'SUSPENDED',
    emailVerified: row.email_verified,
    otpEnabled: row.otp_enabled,
    roles,
    createdAt: iso(row.created_at) as string,
    updatedAt: iso(row.updated_at) as string,
    lastLoginAt: iso(row.last_login_at),
  }
}

export type UserDto = ReturnType<typeof toUserDto>

export interface UserFilter {
  status?: 'ACTIVE' | 'INACTIVE' | 'SUSPENDED'
  /** Case-insensitive substring of email, username or CPF/CNPJ. */
  q?: string
  /** Id of a role the user must hold. */
  roleId?: string
}

/** `%` and `_` in user text are literal in a LIKE pattern. */
function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`)
}

/** One page of the tenant's users, newest first, with the total matching the filter. */
export async function listUsers(
  db: Kysely<Database>,
  tenantId: string,
  f: UserFilter,
  limit: number,
  offset: number,
) {
  let q = db.selectFrom('users').where('users.tenant_id', '=', tenantId)
  if (f.status) q = q.where('users.status', '=', f.status)
  if (f.q) {
    const pattern = `%${likeEscape(f.q.toLowerCase())}%`
    q = q.where((eb) =>
      eb.or([
        eb(sql`lower(users.email)`, 'like', pattern),
        eb(sql`lower(users.username)`, 'like', pattern),
        eb('users.cpf_cnpj', 'like', pattern),
      ]),
    )
  }
  if (f.roleId) {
    const roleId = f.roleId
    q = q.where((eb) =>
      eb.exists(
        eb
          .selectFrom('user_roles')
          .select('user_roles.user_id')
          .whereRef('user_roles.user_id', '=', 'users.id')
          .where('user_roles.tenant_id', '=', tenantId)
          .where('user_roles.role_id', '=', roleId),
      ),
    )
  }
  const [rows, count] = await Promise.all([
    q
      .select(userColumns)
      .orderBy('users.created_at', 'desc')
      .orderBy('users.id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute(),
    q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}

/** Locks one user row of the tenant (FOR UPDATE). Never returns password_hash. Use inside a transaction. */
export function lockUser(db: Kysely<Database>, tenantId: string, userId: string) {
  return db
    .selectFrom('users')
    .select(userColumns)
    .where('users.tenant_id', '=', tenantId)
    .where('users.id', '=', userId)
    .forUpdate()
    .executeTakeFirst()
}

/** The PATCH-able columns of a user. */
export interface UserChanges {
  email?: string
  username?: string
  status?: 'ACTIVE' | 'INACTIVE' | 'SUSPENDED'
  email_verified?: boolean
  otp_enabled?: boolean
}

/** Changes a user of the tenant and touches updated_at; a unique violation means an identifier is taken. */
export function updateUserRow(db: Kysely<Database>, tenantId: string, userId: string, changes: UserChanges) {
  return db
    .updateTable('users')
    .set({ ...changes, updated_at: sql`now()` })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .returning(userColumns)
    .executeTakeFirstOrThrow()
}

/** Deletes a user of the tenant; its sessions, refresh tokens, roles and grants cascade. */
export async function deleteUserRow(db: Kysely<Database>, tenantId: string, userId: string): Promise<void> {
  await db.deleteFrom('users').where('tenant_id', '=', tenantId).where('id', '=', userId).execute()
}
