import { locale } from './i18n.js'

/** A time of the API (ISO 8601) in the reader's language (the console's, not only the browser's); a dash when there is none. */
export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString(locale()) : '—'
}
