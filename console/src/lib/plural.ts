const rules = new Intl.PluralRules('en')

/** "1 user", "2 users": a count with its noun in the number the count takes (English rules). */
export function count(n: number, one: string, other: string): string {
  return `${n.toLocaleString('en')} ${rules.select(n) === 'one' ? one : other}`
}
