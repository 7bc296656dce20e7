import { lookup, type Params } from './i18n.js'

// The kit's own words, the English source of their keys; their Portuguese is in the catalogue
// (i18n/pt-BR/kit.ts), which takes these in with the rest (i18n/en/index.ts).

export const kitEn = {
  'kit.sure': 'Are you sure?',
  'kit.cancel': 'Cancel',
  'kit.copy': 'Copy',
  'kit.copied': 'Copied.',
  'kit.copyFailed': 'Could not copy: select the text and copy it by hand.',
  'kit.pages': 'Pages',
  'kit.previous': 'Previous page',
  'kit.next': 'Next page',
  'kit.range': '{first}–{last} of {total}',
  'kit.valueOf': 'The value of “{name}”',
  'kit.storeNow': 'Store it now: it is shown only this once.',
  'kit.keyValue': 'Key value',
  'kit.stored': 'I have stored it',
  'kit.notAllowed': 'Not allowed: ',
  'kit.support': 'For support:',
  'kit.requestId': ', request id {id}',
  'kit.wrong': 'Something went wrong.',
  'kit.unreachable': 'The service could not be reached.',
  'kit.loading': 'Loading {what}…',
} as const

/** A kit word in the reader's language. */
export function kt(key: keyof typeof kitEn, params?: Params): string {
  return lookup(key, params)
}
