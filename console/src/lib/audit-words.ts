import type { components } from '@tessera/client'

type Row = components['schemas']['AuditRow']
type Action = Row['action']

/**
 * What each event did, said of its subject: who acted (`actor`, for an act of administration) or whom it
 * was about (`user`, for a sign-in event). `{target}` is the thing acted on, when the row names one.
 */
const WORDS: Record<Action, { by: 'actor' | 'user'; done: string; failed: string }> = {
  LOGIN: { by: 'user', done: 'signed in', failed: 'failed to sign in' },
  LOGOUT: { by: 'user', done: 'signed out', failed: 'failed to sign out' },
  REFRESH_TOKEN: { by: 'user', done: 'renewed a session', failed: 'failed to renew a session' },
  REGISTER: { by: 'user', done: 'signed up', failed: 'failed to sign up' },
  USER_DELETE: { by: 'actor', done: 'deleted a user', failed: 'was refused deleting a user' },
  ROLE_ASSIGN: { by: 'actor', done: 'gave a role', failed: 'was refused giving a role' },
  ROLE_REMOVE: { by: 'actor', done: 'took a role away', failed: 'was refused taking a role away' },
  PERMISSION_GRANT: {
    by: 'actor',
    done: 'granted a permission',
    failed: 'was refused granting a permission',
  },
  PERMISSION_REVOKE: {
    by: 'actor',
    done: 'revoked a permission',
    failed: 'was refused revoking a permission',
  },
  PASSWORD_CHANGED: { by: 'user', done: 'changed their password', failed: 'failed to change their password' },
  PASSWORD_RESET: { by: 'user', done: 'reset their password', failed: 'failed to reset their password' },
  SESSIONS_REVOKED: { by: 'user', done: 'had sessions ended', failed: 'did not have sessions ended' },
  ACCOUNT_LOCKED: { by: 'user', done: 'was locked out', failed: 'was not locked out' },
  ACCOUNT_UNLOCKED: { by: 'user', done: 'was unlocked', failed: 'was not unlocked' },
  OTP_ENABLED: {
    by: 'user',
    done: 'turned on the second factor',
    failed: 'failed to turn on the second factor',
  },
  OTP_DISABLED: {
    by: 'user',
    done: 'turned off the second factor',
    failed: 'failed to turn off the second factor',
  },
  OTP_RECOVERY_CODES_RENEWED: {
    by: 'user',
    done: 'renewed their recovery codes',
    failed: 'failed to renew recovery codes',
  },
  PASSWORD_RESET_REQUESTED: {
    by: 'user',
    done: 'asked for a password reset',
    failed: 'asked for a password reset (no mail)',
  },
  EMAIL_VERIFICATION_SENT: {
    by: 'user',
    done: 'was sent a verification mail',
    failed: 'was not sent a verification mail',
  },
  EMAIL_VERIFIED: { by: 'user', done: 'verified their email', failed: 'failed to verify their email' },
  PASSKEY_ADDED: { by: 'user', done: 'added a passkey', failed: 'failed to add a passkey' },
  PASSKEY_REMOVED: { by: 'user', done: 'lost a passkey', failed: 'kept a passkey' },
  EMAIL_CHANGE_REQUESTED: {
    by: 'user',
    done: 'asked to change their email',
    failed: 'failed to ask for an email change',
  },
  EMAIL_CHANGED: { by: 'user', done: 'changed their email', failed: 'failed to change their email' },
  ROLE_CREATE: { by: 'actor', done: 'created {target}', failed: 'was refused creating a role' },
  ROLE_UPDATE: { by: 'actor', done: 'changed {target}', failed: 'was refused changing {target}' },
  ROLE_DELETE: { by: 'actor', done: 'deleted {target}', failed: 'was refused deleting {target}' },
  PERMISSION_CREATE: { by: 'actor', done: 'created {target}', failed: 'was refused creating a permission' },
  PERMISSION_UPDATE: { by: 'actor', done: 'changed {target}', failed: 'was refused changing {target}' },
  PERMISSION_DELETE: { by: 'actor', done: 'deleted {target}', failed: 'was refused deleting {target}' },
  USER_UPDATE: { by: 'actor', done: 'changed {target}', failed: 'was refused changing {target}' },
  TENANT_CREATE: { by: 'actor', done: 'created {target}', failed: 'was refused creating a tenant' },
  TENANT_UPDATE: { by: 'actor', done: 'changed {target}', failed: 'was refused changing {target}' },
  TENANT_DELETE: { by: 'actor', done: 'deleted {target}', failed: 'was refused deleting {target}' },
  TENANT_CONFIG_UPDATE: {
    by: 'actor',
    done: 'changed the settings',
    failed: 'was refused changing the settings',
  },
  TENANT_DATABASE_ROUTE: {
    by: 'actor',
    done: 'moved {target} to a database',
    failed: 'was refused moving {target}',
  },
  CLIENT_KEY_CREATE: { by: 'actor', done: 'issued {target}', failed: 'was refused issuing a Client Key' },
  CLIENT_KEY_UPDATE: { by: 'actor', done: 'changed {target}', failed: 'was refused changing {target}' },
  CLIENT_KEY_ROTATE: { by: 'actor', done: 'rotated {target}', failed: 'was refused rotating {target}' },
  CLIENT_KEY_REVOKE: { by: 'actor', done: 'revoked {target}', failed: 'was refused revoking {target}' },
  PUBLISHABLE_KEY_CREATE: {
    by: 'actor',
    done: 'made {target}',
    failed: 'was refused making a publishable key',
  },
  PUBLISHABLE_KEY_UPDATE: { by: 'actor', done: 'changed {target}', failed: 'was refused changing {target}' },
  PUBLISHABLE_KEY_REVOKE: { by: 'actor', done: 'revoked {target}', failed: 'was refused revoking {target}' },
  OAUTH_CONSENT: { by: 'user', done: 'allowed an application', failed: 'did not allow an application' },
  OAUTH_TOKEN: {
    by: 'user',
    done: 'got tokens for an application',
    failed: 'was refused tokens for an application',
  },
  OAUTH_CLIENT_CREATE: {
    by: 'actor',
    done: 'added an application',
    failed: 'was refused adding an application',
  },
  OAUTH_CLIENT_UPDATE: {
    by: 'actor',
    done: 'changed an application',
    failed: 'was refused changing an application',
  },
  OAUTH_CLIENT_DELETE: {
    by: 'actor',
    done: 'deleted an application',
    failed: 'was refused deleting an application',
  },
  IDENTITY_PROVIDER_CREATE: {
    by: 'actor',
    done: 'added an identity provider',
    failed: 'was refused adding an identity provider',
  },
  IDENTITY_PROVIDER_UPDATE: {
    by: 'actor',
    done: 'changed an identity provider',
    failed: 'was refused changing an identity provider',
  },
  IDENTITY_PROVIDER_DELETE: {
    by: 'actor',
    done: 'deleted an identity provider',
    failed: 'was refused deleting an identity provider',
  },
  IDENTITY_LINKED: {
    by: 'user',
    done: 'linked a sign-in provider',
    failed: 'failed to link a sign-in provider',
  },
  IDENTITY_UNLINKED: {
    by: 'user',
    done: 'unlinked a sign-in provider',
    failed: 'failed to unlink a sign-in provider',
  },
}

const TARGETS: Record<string, string> = {
  role: 'a role',
  permission: 'a permission',
  user: 'a user',
  tenant: 'a tenant',
  client_key: 'a Client Key',
  publishable_key: 'a publishable key',
}

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
  if (typeof name === 'string') return `the Client Key “${name}”`
  return name === null ? 'a deleted Client Key' : 'a Client Key'
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)

/** The event in words: "ana@acme.test created the role ops"; names from `names`, else a general word. */
export function sentenceOf(row: Row, names: Names): string {
  const nameOf = (id: string) => names.user(id.toLowerCase())
  const words = WORDS[row.action]
  const someone = (id: string | null | undefined) => (id ? nameOf(id) : 'Someone')
  const subject =
    words.by === 'user'
      ? row.user_id
        ? nameOf(row.user_id)
        : 'An unknown user'
      : row.actor_type === 'client_key'
        ? capital(actorKeyWords(row, names))
        : someone(row.actor_id)
  const target = targetOf(row)
  const role = target?.type === 'role' ? names.role(target.id) : undefined
  const what = !target
    ? 'something'
    : target.type === 'user'
      ? nameOf(target.id)
      : role
        ? `the role ${role}`
        : target.type === 'client_key' && names.key(target.id.toLowerCase()) !== undefined
          ? targetKeyWords(row, target.id, names)
          : (TARGETS[target.type] ?? 'something')
  const verb = (row.success ? words.done : words.failed).replace('{target}', what)
  return `${subject} ${verb}`
}

/**
 * The key that acted on a row. Why a platform key for an unknown key on a tenant's row: the platform's acts
 * on a tenant land in that tenant's log too (section 25), and its keys are not the tenant's to list.
 */
function actorKeyWords(row: Row, names: Names): string {
  const known = row.actor_id ? names.key(row.actor_id.toLowerCase()) : undefined
  if (known === null && targetOf(row)?.type === 'tenant') return 'a Client Key of the platform'
  return keyWords(names, row.actor_id)
}

/**
 * The key a row acted on. Why another tenant's for an unknown key issued with `tenantId`: the platform issues
 * keys in other tenants, and the row stays in its own log, where that key is not listed.
 */
function targetKeyWords(row: Row, keyId: string, names: Names): string {
  if (names.key(keyId.toLowerCase()) === null && changedOf(row).includes('tenantId'))
    return 'a Client Key of another tenant'
  return keyWords(names, keyId)
}
