import { useState, type ReactNode } from 'react'
import { Empty, ErrorBox, Loading } from './feedback'
import { Pager } from './Pager'
import { columnKey, formatSort, nextSort, parseSort, sortRows, type SortValue } from './sort'

/** Where a paged list stands: the rows of a page (the API's `limit`), the first one shown (`offset`). */
export interface Page {
  limit: number
  offset: number
  onOffset: (offset: number) => void
}

/** A list's page, from its first row; `onOffset(0)` goes back there (after a new search or filter). */
export function usePage(limit: number): Page {
  const [offset, setOffset] = useState(0)
  return { limit, offset, onOffset: setOffset }
}

/** A column of a List's table: its heading, and what a row shows in it. */
export interface Column<T> {
  title: string
  /** The column's name in the URL's sort; made from the title unless given (a title in another language must not change a link). */
  key?: string
  cell: (row: T) => ReactNode
  /** The cell's class: `mono` for a value read letter by letter. */
  className?: string
  /** What the column sorts by; a column with it has a sorting button in its heading (with the List's `sort`). */
  sortBy?: (row: T) => SortValue
}

/** Where a table's sort is kept (the URL's value, see sort.ts) and how a heading's click changes it. */
export interface SortParam {
  value: string | null
  onChange: (value: string) => void
}

interface Shown<T> {
  /** What is loading, in “Loading {what}…”. */
  what: string
  /** The list's error, or an act's on its rows: the first of them that is set. */
  error: unknown
  /** How the error is worded; ErrorBox unless given. */
  showError?: (error: unknown) => ReactNode
  pending: boolean
  /** The rows; undefined while there are none to show (not read, or the read failed). */
  items: readonly T[] | undefined
  /** What an empty list says; null: nothing. */
  empty: ReactNode
  /** Previous/next under the rows, over the answer's `total`. */
  page?: Page
  total?: number
}

interface AsTable<T> extends Shown<T> {
  columns: readonly Column<T>[]
  rowKey: (row: T) => string
  /** A caption over the table, from the answer's `total`. */
  caption?: (total: number) => ReactNode
  /** The name of a focusable scroll region around the table, for a table that is wider than its panel. */
  region?: string
  /** False: the table alone, with no scrolling box around it. */
  scroll?: boolean
  /**
   * Sorts the rows shown by the columns that have `sortBy`. It orders the rows the list holds (one page
   * of the API's, which takes no sort parameter): the other pages keep the API's order.
   */
  sort?: SortParam
}

interface AsChildren<T> extends Shown<T> {
  /** The rows as something other than a table (a list of items). */
  children: (items: readonly T[]) => ReactNode
}

/**
 * A list of a screen, as every one is shown: its error above it, "Loading …" while it is read, a sentence
 * when it is empty, then its rows (a table of `columns`, or what `children` makes of them) and the pager.
 */
export function List<T>(props: AsTable<T> | AsChildren<T>) {
  const { items, page, total } = props
  return (
    <>
      {props.showError ? props.showError(props.error) : <ErrorBox error={props.error} />}
      {props.pending ? (
        <Loading what={props.what} />
      ) : items === undefined ? null : items.length === 0 ? (
        props.empty !== null && <Empty>{props.empty}</Empty>
      ) : (
        <>
          {'columns' in props ? <Table {...props} items={items} /> : props.children(items)}
          {page && total !== undefined && <Pager total={total} {...page} />}
        </>
      )}
    </>
  )
}

/** A column's key in the URL's sort. */
const keyOf = <T,>(c: Column<T>) => c.key ?? columnKey(c.title)

function Table<T>(props: AsTable<T> & { items: readonly T[] }) {
  const { columns, scroll = true } = props
  const sortable = props.sort ? columns.filter((c) => c.sortBy) : []
  const sort = props.sort ? parseSort(props.sort.value, sortable.map(keyOf)) : null
  const by = sort && sortable.find((c) => keyOf(c) === sort.key)?.sortBy
  const rows = sort && by ? sortRows(props.items, sort, by) : props.items
  const heading = (c: Column<T>) => {
    const key = keyOf(c)
    if (!props.sort || !c.sortBy) return c.title
    const { onChange } = props.sort
    const here = sort?.key === key ? sort.dir : null
    return (
      // Why a button: a heading's click must be reachable by keyboard, and say that it acts.
      <button type="button" className="sort" onClick={() => onChange(formatSort(nextSort(sort, key)))}>
        {c.title}
        <span aria-hidden="true">{here === 'asc' ? ' ▲' : here === 'desc' ? ' ▼' : ' ↕'}</span>
      </button>
    )
  }
  const table = (
    <table>
      {props.caption && props.total !== undefined && <caption>{props.caption(props.total)}</caption>}
      <thead>
        <tr>
          {columns.map((c) => (
            <th
              key={c.title}
              scope="col"
              aria-sort={
                sort?.key === keyOf(c) ? (sort.dir === 'asc' ? 'ascending' : 'descending') : undefined
              }
            >
              {heading(c)}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={props.rowKey(row)}>
            {columns.map((c) => (
              <td key={c.title} className={c.className}>
                {c.cell(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  )
  if (props.region) {
    return (
      // Why focusable: the table is wider than a phone or its panel, and a keyboard user must scroll it.
      <div className="scroll" tabIndex={0} role="region" aria-label={props.region}>
        {table}
      </div>
    )
  }
  return scroll ? <div className="scroll">{table}</div> : table
}
