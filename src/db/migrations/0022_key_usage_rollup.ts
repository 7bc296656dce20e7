import { sql, type Kysely, type Migration } from 'kysely'

// An hourly rollup of Client Key usage (issue 45, docs/decisions.md D29): GET /client-keys/{id}/stats
// sums a key's counted hours and reads only its rows since, instead of every usage row of the key
// (100,895 rows for the largest seeded key: p99 80-162 ms under load, moving with what the cache held).
// `client_key_usage_marks.covered_to`: every row of the key before it is counted in the hourly rows.
// Frozen once released.

export const keyUsageRollup: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create table client_key_usage_hourly (
      key_id uuid not null,
      hour timestamptz not null,
      route text not null,
      total integer not null,
      s2 integer not null,
      s4 integer not null,
      s5 integer not null,
      primary key (key_id, hour, route)
    )`.execute(db)
    await sql`create index client_key_usage_hourly_hour on client_key_usage_hourly (hour)`.execute(db)
    await sql`create table client_key_usage_marks (
      key_id uuid primary key,
      covered_to timestamptz not null
    )`.execute(db)
  },

  async down(db: Kysely<unknown>) {
    await sql`drop table client_key_usage_marks`.execute(db)
    await sql`drop table client_key_usage_hourly`.execute(db)
  },
}
