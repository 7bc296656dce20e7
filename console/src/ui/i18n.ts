import { useSyncExternalStore } from 'react'

// The console's language (issue 44): the words of every screen come from one catalogue (console/src/i18n/),
// looked up here. Why in ui/: the kit's own words (Cancel, the pager) come from the same lookup, and ui/
// imports nothing of the console but ui/; the catalogue hands its tables in through `addWords`.

/** The languages the console speaks; English is the catalogue's source and the fallback. */
export type Locale = 'en' | 'pt-BR'
export const LOCALES: readonly Locale[] = ['en', 'pt-BR']

/** A word that takes a count: the forms Intl.PluralRules names (English and Portuguese use one and other). */
export interface Plural {
  one: string
  other: string
}
export type Entry = string | Plural

/** The same keys as `T`, each with a text of the same kind (a plain one, or a pair of counts). */
export type WordsOf<T> = { readonly [K in keyof T]: T[K] extends string ? string : Plural }

/** What a placeholder `{name}` of an entry is given. */
export type Params = Record<string, string | number>

const STORED = 'tessera.locale'
const tables: Partial<Record<Locale, Readonly<Record<string, Entry>>>> = {}
const listeners = new Set<() => void>()

/** The reader's language from the browser's list: any Portuguese is Brazilian Portuguese, else English. */
export function localeOf(languages: readonly string[]): Locale {
  for (const tag of languages) {
    const lower = tag.toLowerCase()
    if (lower === 'pt' || lower.startsWith('pt-')) return 'pt-BR'
    if (lower === 'en' || lower.startsWith('en-')) return 'en'
  }
  return 'en'
}

/** The language chosen in the console's switch (localStorage), else the browser's; English outside a browser. */
function initialLocale(): Locale {
  if (typeof window === 'undefined') return 'en'
  try {
    const stored = window.localStorage.getItem(STORED)
    if (stored && (LOCALES as readonly string[]).includes(stored)) return stored as Locale
  } catch {
    // Why ignore: storage may be refused (a private window's policy); the browser's language is used.
  }
  return localeOf(navigator.languages ?? [navigator.language])
}

let current: Locale = initialLocale()

/** The language the words are shown in now. */
export function locale(): Locale {
  return current
}

/** Hands a language's table to the lookup (the catalogue does, once its module is loaded). */
export function addWords(lang: Locale, table: Readonly<Record<string, Entry>>): void {
  tables[lang] = { ...tables[lang], ...table }
}

/** Shows the console in `lang` from now on: `<html lang>`, the re-render, and `remember` keeps it for later visits. */
export function setLocale(lang: Locale, remember = false): void {
  current = lang
  if (typeof document !== 'undefined') document.documentElement.lang = lang
  if (remember) {
    try {
      window.localStorage.setItem(STORED, lang)
    } catch {
      // Why ignore: the switch still holds for this visit.
    }
  }
  for (const listener of listeners) listener()
}

/** The language, for a component that must render again when it changes. */
export function useLocale(): Locale {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    locale,
    locale,
  )
}

/** A number as the reader's language writes it: "1,200" or "1.200". */
export function num(n: number): string {
  return n.toLocaleString(current)
}

/**
 * The text of `key` in the current language (English when the language lacks it), its `{name}`s replaced
 * by `params`; an entry with counts takes the form `params.count` asks for, its `{count}` written as a number.
 */
export function lookup(key: string, params?: Params): string {
  const entry = tables[current]?.[key] ?? tables.en?.[key]
  if (entry === undefined) return key
  let text: string
  if (typeof entry === 'string') text = entry
  else {
    const n = Number(params?.count ?? 0)
    text = new Intl.PluralRules(current).select(n) === 'one' ? entry.one : entry.other
  }
  if (!params) return text
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params[name]
    if (value === undefined) return whole
    return typeof value === 'number' ? num(value) : value
  })
}
