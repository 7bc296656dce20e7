import { sql, type Insertable, type Kysely, type Selectable, type Transaction, type Updateable } from 'kysely'
import type { Database, JsonRow, Unqualified, UsersTable } from '../../db/database.js'
import { paginate, type PageParams } from '../../db/paginate.js'
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

/** A user row as `userColumns` selects it. */
export type UserRow = Pick<Selectable<UsersTable>, Unqualified<(typeof userColumns)[number]>>

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

/** The tenant's users with this email, case-insensitive: at most two (one is an answer, two a conflict). */
export function findUsersByEmail(db: Kysely<Database>, tenantId: string, email: string) {
  return db
    .selectFrom('users')
    .select([...userColumns])
    .where('users.tenant_id', '=', tenantId)
    .where(sql`lower(users.email)`, '=', email.toLowerCase())
    .limit(2)
    .execute()
}

function userById(db: Kysely<Database>, tenantId: string, userId: string) {
  return db
    .selectFrom('users')
    .select(userColumns)
    .where('users.tenant_id', '=', tenantId)
    .where('users.id', '=', userId)
}

/** One user of the tenant by id (never the password hash). */
export function findUserById(db: Kysely<Database>, tenantId: string, userId: string) {
  return userById(db, tenantId, userId).executeTakeFirst()
}

/** Locks one user row of the tenant (FOR UPDATE) until the transaction ends, with its security_version (mail tokens record it). Never returns password_hash. */
export function lockUser(trx: Transaction<Database>, tenantId: string, userId: string) {
  return userById(trx, tenantId, userId).select('users.security_version').forUpdate().executeTakeFirst()
}

/** A user's status and password hash, for checking a password outside the login path (change, reset). */
export function findUserPassword(db: Kysely<Database>, tenantId: string, userId: string) {
  return db
    .selectFrom('users')
    .select(['id', 'status', 'password_hash'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .executeTakeFirst()
}

/** Locks a user row (FOR UPDATE) and reads its password hash, to change it only if nobody did meanwhile. */
export function lockUserPassword(trx: Transaction<Database>, tenantId: string, userId: string) {
  return trx
    .selectFrom('users')
    .select(['id', 'password_hash'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .forUpdate()
    .executeTakeFirst()
}

/** Stores a new password hash and touches updated_at. */
export async function setPasswordHash(
  trx: Transaction<Database>,
  tenantId: string,
  userId: string,
  hash: string,
): Promise<void> {
  await trx
    .updateTable('users')
    .set({ password_hash: hash, updated_at: sql`now()` })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .execute()
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString())

/**
 * The `User` object (openapi/components/users.yaml), from a row or its `row_to_json` form. Never any
 * password material.
 */
export function toUserDto(row: UserRow | JsonRow<UserRow>, tenantCode: string, roles: string[]) {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    tenantCode,
    email: row.email,
    username: row.username,
    cpf_cnpj: row.cpf_cnpj,
    status: row.status,
    emailVerified: row.email_verified,
    otpEnabled: row.otp_enabled,
    roles,
    createdAt: iso(row.created_at) as string,
    updatedAt: iso(row.updated_at) as string,
    lastLoginAt: iso(row.last_login_at),
  }
}

export interface UserFilter {
  status?: 'ACTIVE' | 'INACTIVE' | 'SUSPENDED'
  /** Case-insensitive substring of email, username or CPF/CNPJ. */
  q?: string
  /** Id of a role the user must hold. */
  roleId?: string
  /** Only these users (at most 100: the document's limit). */
  ids?: readonly string[]
}

/** `%` and `_` in user text are literal in a LIKE pattern. */
function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`)
}

/** One page of the tenant's users, newest first, with the total matching the filter. */
export function listUsers(db: Kysely<Database>, tenantId: string, f: UserFilter, page: PageParams) {
  let q = db.selectFrom('users').where('users.tenant_id', '=', tenantId)
  if (f.status) q = q.where('users.status', '=', f.status)
  if (f.ids) q = q.where('users.id', 'in', [...f.ids])
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
  return paginate(q.select(userColumns).orderBy('users.created_at', 'desc').orderBy('users.id', 'desc'), page)
}

/** The PATCH-able columns of a user. */
export type UserChanges = Pick<
  Updateable<UsersTable>,
  'email' | 'username' | 'status' | 'email_verified' | 'otp_enabled'
>

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

/** The tenant's users, and how many of them are ACTIVE (tenant metrics). */
export async function countUsers(db: Kysely<Database>, tenantId: string) {
  const row = await db
    .selectFrom('users')
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      sql<number>`count(*) filter (where status = 'ACTIVE')`.as('active'),
    ])
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow()
  return { total: Number(row.total), active: Number(row.active) }
}

/**
 * The stored password of a user who has none (made by a federated sign-in, contract section 24): no hash
 * format, so every password verify of it fails at a real verify's cost (lib/hashing.ts), until a reset sets one.
 */
export const NO_PASSWORD = '!'

/** A new user row; its columns as userColumns lists them (never the password hash). */
export function insertUser(db: Kysely<Database>, values: Insertable<UsersTable>) {
  return db.insertInto('users').values(values).returning(userColumns).executeTakeFirstOrThrow()
}

/**
 * The user's status, its row locked: the first statement of opening a session (lock order: user row,
 * session rows, refresh tokens; see sessions/queries.ts).
 */
export function lockUserStatus(trx: Transaction<Database>, tenantId: string, userId: string) {
  return trx
    .selectFrom('users')
    .select('status')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .forUpdate()
    .executeTakeFirst()
}

/** Records a login at `now`, and the password's new hash when it was rehashed. */
export async function recordLogin(
  trx: Transaction<Database>,
  tenantId: string,
  userId: string,
  now: Date,
  newHash: string | null | undefined,
): Promise<void> {
  await trx
    .updateTable('users')
    .set(newHash ? { last_login_at: now, password_hash: newHash } : { last_login_at: now })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .execute()
}

/** Marks whether the user's logins need a second factor (set with its enrollment, cleared with its removal). */
export async function setOtpEnabled(
  trx: Transaction<Database>,
  tenantId: string,
  userId: string,
  enabled: boolean,
): Promise<void> {
  await trx
    .updateTable('users')
    .set({ otp_enabled: enabled, updated_at: sql`now()` })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .execute()
}

/** Sets email_verified on a user of the tenant. */
export async function markEmailVerified(
  trx: Transaction<Database>,
  tenantId: string,
  userId: string,
): Promise<void> {
  await trx
    .updateTable('users')
    .set({ email_verified: true, updated_at: sql`now()` })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .execute()
}

/** Whether a user of the tenant other than `userId` has this email (compared lowercase, as its unique index). */
export async function emailTakenByOther(
  db: Kysely<Database>,
  tenantId: string,
  email: string,
  userId: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .where('id', '<>', userId)
    .executeTakeFirst()
  return row !== undefined
}

/** Whether a user of the tenant has this username (compared lowercase, as its unique index). */
export async function usernameTaken(db: Kysely<Database>, tenantId: string, username: string) {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where(sql`lower(username)`, '=', username.toLowerCase())
    .executeTakeFirst()
  return row !== undefined
}
