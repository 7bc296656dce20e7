import { addWords, lookup, setLocale, type Locale, type Params } from '../ui/i18n.js'
import { en } from './en/index.js'

// The console's one catalogue (issue 44): English in ./en (the source of the keys, in the first load), each
// other language in its folder, typed against it (a missing key is a type error) and loaded when chosen.
// To add a language: a folder like ./pt-BR, its name in ui/i18n.ts's Locale and LOCALES, a line in `load`.

export type Key = keyof typeof en
addWords('en', en)

/** The text of `key` in the reader's language, `{name}`s from `params`, the form `params.count` asks for. */
export function t(key: Key, params?: Params): string {
  return lookup(key, params)
}

/** Whether `key` is one of the catalogue's (for keys made from data: a field's JSON pointer, an option's value). */
export function hasWord(key: string): key is Key {
  return Object.hasOwn(en, key)
}

/** Loads a language's words (English is always loaded). */
async function load(lang: Locale): Promise<void> {
  if (lang === 'pt-BR') addWords('pt-BR', (await import('./pt-BR/index.js')).ptBR)
}

/** Shows the console in `lang`, once its words are loaded; `remember`: the switch's choice, kept in localStorage. */
export async function chooseLocale(lang: Locale, remember = false): Promise<void> {
  await load(lang)
  setLocale(lang, remember)
}
