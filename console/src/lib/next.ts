/**
 * The sign-in address that brings its reader back to `target` (a path below /console with its query):
 * `/sign-in?next=…`, or plain `/sign-in` for the overview.
 */
export function signInFor(target: string): string {
  return target === '/' || target === '' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(target)}`
}

/** Screens a `next` never leads to: the sign-in pages, and the mail links' forms (whose token is not yours). */
const NOT_NEXT = new Set(['sign-in', 'forgot-password', 'reset-password', 'verify-email'])

/**
 * Where to go after signing in: the screen a shared link asked for (`?next=`), when it is a plain path of
 * this console (segments of letters, digits, `-` and `_`, then any query); else the overview. Why so
 * strict: `next` comes from a URL anyone can craft. It must never lead off the console (`//host`,
 * `/\host`, `/../x`, `%2e%2e`), back to the sign-in, or to a mail link's form with someone else's token.
 */
export function afterSignIn(search: string): string {
  const next = new URLSearchParams(search).get('next') ?? ''
  const m = /^\/((?:[A-Za-z0-9_-]+\/?)*)(\?\S*)?$/.exec(next)
  if (!m) return '/'
  const first = (m[1] ?? '').split('/')[0] ?? ''
  return NOT_NEXT.has(first) ? '/' : next
}
