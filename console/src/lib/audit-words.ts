import type { components } from '@tessera/client'
import { t } from '../i18n/index.js'

type Row = components['schemas']['AuditRow']
type Action = Row['action']

/**
 * Who each event is said of: who acted (`actor`, for an act of administration) or whom it was about (`user`,
 * for a sign-in event). What it did is in the catalogue (i18n/en/audit-words.ts), `{target}` the thing acted on.
 */
const BY: Record<Action, 'actor' | 'user'> = {
  LOGIN: 'user',
  LOGOUT: 'user',
  REFRESH_TOKEN: 'user',
  REGISTER: 'user',
  USER_DELETE: 'actor',
  ROLE_ASSIGN: 'actor',
  ROLE_REMOVE: 'actor',
  PERMISSION_GRANT: 'actor',
  PERMISSION_REVOKE: 'actor',
  PASSWORD_CHANGED: 'user',
  PASSWORD_RESET: 'user',
  SESSIONS_REVOKED: 'user',
  ACCOUNT_LOCKED: 'user',
  ACCOUNT_UNLOCKED: 'user',
  OTP_ENABLED: 'user',
  OTP_DISABLED: 'user',
  OTP_RECOVERY_CODES_RENEWED: 'user',
  PASSWORD_RESET_REQUESTED: 'user',
  EMAIL_VERIFICATION_SENT: 'user',
  EMAIL_VERIFIED: 'user',
  PASSKEY_ADDED: 'user',
  PASSKEY_REMOVED: 'user',
  EMAIL_CHANGE_REQUESTED: 'user',
  EMAIL_CHANGED: 'user',
  ROLE_CREATE: 'actor',
  ROLE_UPDATE: 'actor',
  ROLE_DELETE: 'actor',
  PERMISSION_CREATE: 'actor',
  PERMISSION_UPDATE: 'actor',
  PERMISSION_DELETE: 'actor',
  USER_UPDATE: 'actor',
  TENANT_CREATE: 'actor',
  TENANT_UPDATE: 'actor',
  TENANT_DELETE: 'actor',
  TENANT_CONFIG_UPDATE: 'actor',
  TENANT_DATABASE_ROUTE: 'actor',
  CLIENT_KEY_CREATE: 'actor',
  CLIENT_KEY_UPDATE: 'actor',
  CLIENT_KEY_ROTATE: 'actor',
  CLIENT_KEY_REVOKE: 'actor',
  PUBLISHABLE_KEY_CREATE: 'actor',
  PUBLISHABLE_KEY_UPDATE: 'actor',
  PUBLISHABLE_KEY_REVOKE: 'actor',
  OAUTH_CONSENT: 'user',
  OAUTH_TOKEN: 'user',
  OAUTH_CLIENT_CREATE: 'actor',
  OAUTH_CLIENT_UPDATE: 'actor',
  OAUTH_CLIENT_DELETE: 'actor',
  IDENTITY_PROVIDER_CREATE: 'actor',
  IDENTITY_PROVIDER_UPDATE: 'actor',
  IDENTITY_PROVIDER_DELETE: 'actor',
  IDENTITY_LINKED: 'user',
  IDENTITY_UNLINKED: 'user',
}

/** The kinds of thing a row's target may be, each with its general word ("a role") in the catalogue. */
const TARGETS = ['role', 'permission', 'user', 'tenant', 'client_key', 'publishable_key'] as const

/** The row's `metadata.target` (section 25), when it names one. */
export function targetOf(row: Row): { type: string; id: string } | undefined {
  const target = (row.metadata as { target?: { type?: unknown; id?: unknown } }).target
  return typeof target?.type === 'string' && typeof target.id === 'string'
    ? { type: target.type, id: target.id }
    : undefined
}

/** The field names a section 25 row says the call set. */
export function changedOf(row: Row): string[] {
  const changed = (row.metadata as { changed?: unknown }).changed
  return Array.isArray(changed) ? changed.filter((c): c is string => typeof c === 'string') : []
}

/** The user ids a page of rows names (the user, a user actor, a user target): to name them in one request. */
export function userIdsOf(rows: readonly Row[]): string[] {
  const ids = new Set<string>()
  // Why only UUIDs, lowercased: the names request refuses anything else, and ids are stored in lower case.
  const add = (id: string | null | undefined) => {
    if (id && UUID.test(id)) ids.add(id.toLowerCase())
  }
  for (const r of rows) {
    add(r.user_id)
    if (r.actor_type === 'user') add(r.actor_id)
    const target = targetOf(r)
    if (target?.type === 'user') add(target.id)
  }
  return [...ids]
}

/** The Client Key ids a page of rows names (a key actor, a key target): to name them in one request. */
export function keyIdsOf(rows: readonly Row[]): string[] {
  const ids = new Set<string>()
  const add = (id: string | null | undefined) => {
    if (id && UUID.test(id)) ids.add(id.toLowerCase())
  }
  for (const r of rows) {
    if (r.actor_type === 'client_key') add(r.actor_id)
    const target = targetOf(r)
    if (target?.type === 'client_key') add(target.id)
  }
  return [...ids]
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * How a screen names what rows point at: people by id (their email, say), roles by id when known, Client Keys
 * by id: the name, `null` for a key the tenant does not have (deleted), `undefined` while not known yet.
 */
export interface Names {
  user: (userId: string) => string
  role: (roleId: string) => string | undefined
  key: (keyId: string) => string | null | undefined
}

/** A Client Key in words: "the Client Key “billing”", "a deleted Client Key", or "a Client Key" while unknown. */
export function keyWords(names: Names, keyId: string | null | undefined): string {
  const name = keyId ? names.key(keyId.toLowerCase()) : undefined
  if (typeof name === 'string') return t('audit.theKey', { name })
  return name === null ? t('audit.deletedKey') : t('audit.aKey')
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)

/** The event in words: "ana@acme.test created the role ops"; names from `names`, else a general word. */
export function sentenceOf(row: Row, names: Names): string {
  const nameOf = (id: string) => names.user(id.toLowerCase())
  const someone = (id: string | null | undefined) => (id ? nameOf(id) : t('audit.someone'))
  const subject =
    BY[row.action] === 'user'
      ? row.user_id
        ? nameOf(row.user_id)
        : t('audit.unknownUser')
      : row.actor_type === 'client_key'
        ? capital(actorKeyWords(row, names))
        : someone(row.actor_id)
  const target = targetOf(row)
  const role = target?.type === 'role' ? names.role(target.id) : undefined
  const what = !target
    ? t('audit.something')
    : target.type === 'user'
      ? nameOf(target.id)
      : role
        ? t('audit.theRole', { name: role })
        : target.type === 'client_key' && names.key(target.id.toLowerCase()) !== undefined
          ? targetKeyWords(row, target.id, names)
          : (TARGETS as readonly string[]).includes(target.type)
            ? t(`audit.target.${target.type as (typeof TARGETS)[number]}`)
            : t('audit.something')
  const verb = t(`audit.${row.action}.${row.success ? 'done' : 'failed'}`, { target: what })
  return t('audit.sentence', { subject, verb })
}

/**
 * The key that acted on a row. Why a platform key for an unknown key on a tenant's row: the platform's acts
 * on a tenant land in that tenant's log too (section 25), and its keys are not the tenant's to list.
 */
function actorKeyWords(row: Row, names: Names): string {
  const known = row.actor_id ? names.key(row.actor_id.toLowerCase()) : undefined
  if (known === null && targetOf(row)?.type === 'tenant') return t('audit.platformKey')
  return keyWords(names, row.actor_id)
}

/**
 * The key a row acted on. Why another tenant's for an unknown key issued with `tenantId`: the platform issues
 * keys in other tenants, and the row stays in its own log, where that key is not listed.
 */
function targetKeyWords(row: Row, keyId: string, names: Names): string {
  if (names.key(keyId.toLowerCase()) === null && changedOf(row).includes('tenantId'))
    return t('audit.otherTenantKey')
  return keyWords(names, keyId)
}
