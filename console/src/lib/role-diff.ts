/**
 * What a role's (or a user's) permissions edit must send: the names to add and the names to remove, from
 * the set before and the set chosen. The API takes additions and removals as two operations, not the
 * whole set, so a name changed by someone else in the meantime and untouched here is left alone.
 */
export function permissionDiff(
  before: readonly string[],
  after: readonly string[],
): { add: string[]; remove: string[] } {
  const was = new Set(before)
  const now = new Set(after)
  return {
    add: [...now].filter((p) => !was.has(p)).sort(),
    remove: [...was].filter((p) => !now.has(p)).sort(),
  }
}

/** The names to offer as choices: every known one and every one already held, once each, sorted. */
export function choices(known: readonly string[], held: readonly string[]): string[] {
  return [...new Set([...known, ...held])].sort()
}
