import { t, type Key } from '../i18n'

/** What each OpenID scope gives the application, in words (contract section 23: "each scope in words"). */
const WORDS: Record<string, Key> = {
  openid: 'scope.openid',
  profile: 'scope.profile',
  email: 'scope.email',
  roles: 'scope.roles',
  offline_access: 'scope.offline_access',
}

/** The sentence for one scope; a scope of an API (a resource's) is named as the API calls it. */
export function scopeInWords(scope: string, resource: string | null): string {
  const known = WORDS[scope]
  if (known) return t(known)
  return resource ? t('scope.apiOf', { scope, resource }) : t('scope.api', { scope })
}
