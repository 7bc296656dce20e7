// A table's sort as the URL keeps it: `?sort=name` (ascending) or `?sort=-name` (descending), the column's
// key made from its heading. Why in the URL: a sorted list is a link to share, and reload and Back keep it.

/** Which column a table is sorted by, and which way. */
export interface Sort {
  key: string
  dir: 'asc' | 'desc'
}

/** What a sortable column's rows are compared by; null and undefined go last either way. */
export type SortValue = string | number | boolean | null | undefined

/** A column's key in the URL, from its heading: "Last login" → "last-login". */
export function columnKey(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
}

/** The sort a URL value names, or null when it names none of `keys` (a stale or hand-made link). */
export function parseSort(value: string | null, keys: readonly string[]): Sort | null {
  if (!value) return null
  const desc = value.startsWith('-')
  const key = desc ? value.slice(1) : value
  return keys.includes(key) ? { key, dir: desc ? 'desc' : 'asc' } : null
}

/** The URL value of a sort. */
export function formatSort(sort: Sort): string {
  return sort.dir === 'desc' ? `-${sort.key}` : sort.key
}

/** The sort after a click on `key`'s heading: ascending first, then the other way at each click. */
export function nextSort(current: Sort | null, key: string): Sort {
  return current?.key === key && current.dir === 'asc' ? { key, dir: 'desc' } : { key, dir: 'asc' }
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' })

function compare(a: SortValue, b: SortValue): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b)
  return collator.compare(String(a), String(b))
}

/**
 * The rows in the order of `sort` (a new array; equal rows keep their order), by `valueOf` the row's
 * value in that column. Empty values (null, undefined, '') go last in both directions: what is missing is
 * never the first thing shown.
 */
export function sortRows<T>(rows: readonly T[], sort: Sort, valueOf: (row: T) => SortValue): T[] {
  const sign = sort.dir === 'asc' ? 1 : -1
  const empty = (v: SortValue) => v === null || v === undefined || v === ''
  return rows
    .map((row) => ({ row, value: valueOf(row) }))
    .sort((a, b) => {
      if (empty(a.value) || empty(b.value)) return Number(empty(a.value)) - Number(empty(b.value))
      return sign * compare(a.value, b.value)
    })
    .map((r) => r.row)
}
