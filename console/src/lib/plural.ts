import { locale, num } from '../ui/i18n.js'

/** "1 user", "2 users": a count with its noun in the number the count takes (the reader's language's rules). */
export function count(n: number, one: string, other: string): string {
  return `${num(n)} ${new Intl.PluralRules(locale()).select(n) === 'one' ? one : other}`
}
