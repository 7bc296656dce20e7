/** The tenant's password policy in words: "At least 12 characters, with a digit; not a common password." */
export function policyWords(p: {
  minLength?: number
  requireUppercase?: boolean
  requireLowercase?: boolean
  requireDigit?: boolean
  requireSymbol?: boolean
  rejectCommon?: boolean
}): string {
  const needs = [
    p.requireUppercase && 'a capital letter',
    p.requireLowercase && 'a small letter',
    p.requireDigit && 'a digit',
    p.requireSymbol && 'a symbol',
  ].filter((n): n is string => Boolean(n))
  const list = needs.length > 1 ? `${needs.slice(0, -1).join(', ')} and ${needs.at(-1)}` : needs[0]
  return (
    `At least ${p.minLength ?? 8} characters` +
    (list ? `, with ${list}` : '') +
    (p.rejectCommon ? '; not a common password.' : '.')
  )
}
