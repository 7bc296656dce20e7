import type { SelectQueryBuilder } from 'kysely'
import { LRUCache } from 'lru-cache'

/** `limit` and `offset` of a list request; absent ones default to 20 and 0. */
export interface PageParams {
  limit?: number
  offset?: number
}

/** The `data` of every list endpoint. */
interface Page<T> {
  items: T[]
  total: number
  limit: number
  offset: number
}

/** A total at or above this is remembered for LARGE_TOTAL_TTL_MS (smaller ones are always counted). */
export const LARGE_TOTAL = 10_000
const LARGE_TOTAL_TTL_MS = 10_000

// Why: an exact count of a million matching rows (a big tenant's unfiltered audit log) costs ~100 ms of
// index scan, against 0.1 ms for its page. Paging through such a list repeats the same count, so a large
// total is kept for 10 seconds per exact query (SQL text and parameters, the tenant id among them): it
// may then lag the rows added or removed meanwhile, while every total under 10,000 stays exact.
const largeTotals = new LRUCache<string, number>({ max: 1000, ttl: LARGE_TOTAL_TTL_MS })

/**
 * One page of `query` (filters, columns and order already applied) and the total of rows matching its
 * filters: the same query without its columns and order, counted. Two statements, sent concurrently;
 * a total of LARGE_TOTAL or more is reused for 10 s.
 */
export async function paginate<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: PageParams,
): Promise<Page<O>> {
  const limit = page.limit ?? 20
  const offset = page.offset ?? 0
  const countQuery = query
    .clearSelect()
    .clearOrderBy()
    .select((eb) => eb.fn.countAll().as('n'))
    .$castTo<{ n: number | string | bigint }>()
  const compiled = countQuery.compile()
  const key = `${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`
  const known = largeTotals.get(key)
  const [items, total] = await Promise.all([
    query.limit(limit).offset(offset).execute(),
    known ?? countQuery.executeTakeFirstOrThrow().then((c) => Number(c.n)),
  ])
  if (known === undefined && total >= LARGE_TOTAL) largeTotals.set(key, total)
  return { items, total, limit, offset }
}
