/**
 * The sign-in address that brings its reader back to `target` (a path below /console with its query):
 * `/sign-in?next=…`, or plain `/sign-in` for the overview.
 */
export function signInFor(target: string): string {
  return target === '/' || target === '' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(target)}`
}

/**
 * Where to go after signing in: the screen a shared link asked for (`?next=`), when it is a path of this
 * console; else the overview. Why the check: `next` comes from a URL anyone can craft, and must never
 * lead off the console (`//host`, `/\host`) or back to the sign-in.
 */
export function afterSignIn(search: string): string {
  const next = new URLSearchParams(search).get('next') ?? ''
  return /^\/(?![/\\])\S*$/.test(next) && !next.startsWith('/sign-in') ? next : '/'
}
