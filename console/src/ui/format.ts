/** A time of the API (ISO 8601) in the reader's locale; a dash when there is none. */
export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—'
}
