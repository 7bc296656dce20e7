/** What each OpenID scope gives the application, in words (contract section 23: "each scope in words"). */
const WORDS: Record<string, string> = {
  openid: 'Know who you are: your user id in this tenant',
  profile: 'See your username and when your profile last changed',
  email: 'See your email address and whether it is verified',
  roles: 'See your roles and permissions in this tenant',
  offline_access: 'Stay connected while you are away: it can renew its access without asking you',
}

/** The sentence for one scope; a scope of an API (a resource's) is named as the API calls it. */
export function scopeInWords(scope: string, resource: string | null): string {
  const known = WORDS[scope]
  if (known) return known
  return resource ? `Use “${scope}” on ${resource}` : `Use “${scope}”`
}
