import { sql, type Kysely, type Migration } from 'kysely'

// Hourly counts of audit rows per tenant and action (docs/decisions.md D26): GET /auth-logs/stats reads
// closed hours from here instead of counting up to a year of audit rows per call (a 30-day window of the
// 10M-row bench's largest tenant was a 7 s sequential scan). Derived data, computed lazily from the audit
// log by its owner module (src/modules/audit): never copied when a tenant moves, purged with its rows.
// `audit_rollup_marks` holds, per tenant, the one contiguous range of hours that has been counted.

export const auditRollup: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create table audit_hourly_counts (
      tenant_id uuid not null references tenants(id) on delete cascade,
      hour timestamptz not null,
      action text not null,
      success integer not null check (success >= 0),
      failure integer not null check (failure >= 0),
      primary key (tenant_id, hour, action)
    )`.execute(db)
    await sql`create table audit_rollup_marks (
      tenant_id uuid primary key references tenants(id) on delete cascade,
      covered_from timestamptz not null,
      covered_to timestamptz not null,
      check (covered_from <= covered_to)
    )`.execute(db)
  },

  async down(db: Kysely<unknown>) {
    await sql`drop table audit_rollup_marks`.execute(db)
    await sql`drop table audit_hourly_counts`.execute(db)
  },
}
