import { kt } from './words'

/** Previous/next over a list with `total`, `limit` and `offset`, as every list of the API answers. */
export function Pager(props: {
  total: number
  limit: number
  offset: number
  onOffset: (n: number) => void
}) {
  const { total, limit, offset, onOffset } = props
  if (total <= limit) return null
  const last = Math.min(offset + limit, total)
  return (
    <nav aria-label={kt('kit.pages')} className="pager">
      <button type="button" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - limit))}>
        {kt('kit.previous')}
      </button>
      <span>{kt('kit.range', { first: offset + 1, last, total })}</span>
      <button type="button" disabled={last >= total} onClick={() => onOffset(offset + limit)}>
        {kt('kit.next')}
      </button>
    </nav>
  )
}
