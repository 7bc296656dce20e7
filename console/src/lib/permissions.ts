/**
 * Whether `held` (the token's permissions) covers `wanted`: the name itself, its resource's wildcard
 * (`users:*`) or the platform's `admin:*`. Only for what to show: the server decides what is allowed.
 */
export function covers(held: readonly string[], wanted: string): boolean {
  if (held.includes(wanted) || held.includes('admin:*')) return true
  const resource = wanted.slice(0, wanted.indexOf(':'))
  return resource !== '' && held.includes(`${resource}:*`)
}
