import type { Kysely } from 'kysely'
import type { Database } from '../../db/database.js'

/**
 * Returns the stored value of a service setting, creating it with `make()` the first time. Safe when
 * two instances start at once: the first insert wins and both read the same value.
 */
export async function ensureSetting(db: Kysely<Database>, key: string, make: () => string): Promise<string> {
  await db
    .insertInto('service_settings')
    .values({ key, value: make() })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute()
  const row = await db
    .selectFrom('service_settings')
    .select('value')
    .where('key', '=', key)
    .executeTakeFirstOrThrow()
  return row.value
}
