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
    <nav aria-label="Pages" className="pager">
      <button type="button" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - limit))}>
        Previous page
      </button>
      <span>
        {offset + 1}–{last} of {total}
      </span>
      <button type="button" disabled={last >= total} onClick={() => onOffset(offset + limit)}>
        Next page
      </button>
    </nav>
  )
}
