import type { SelectQueryBuilder } from 'kysely'

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

/**
 * One page of `query` (filters, columns and order already applied) and the total of rows matching its
 * filters: the same query without its columns and order, counted. Two statements, sent concurrently.
 */
export async function paginate<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: PageParams,
): Promise<Page<O>> {
  const limit = page.limit ?? 20
  const offset = page.offset ?? 0
  const [items, count] = await Promise.all([
    query.limit(limit).offset(offset).execute(),
    query
      .clearSelect()
      .clearOrderBy()
      .select((eb) => eb.fn.countAll().as('n'))
      .$castTo<{ n: number | string | bigint }>()
      .executeTakeFirstOrThrow(),
  ])
  return { items, total: Number(count.n), limit, offset }
}
