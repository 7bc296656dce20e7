import { sql, type Kysely, type Migration } from 'kysely'

// Publishable keys (contract section 20, docs/decisions.md D24), owned by src/modules/publishable-keys.
// Both tables live in the main database, like client_keys: a sign-up finds its key by the value alone,
// before it knows the tenant, and a used ALTCHA solution must be seen by every instance whatever tenant
// it was for. A tenant's keys go with it (on delete cascade); relocation moves none of them.

export const publishableKeys: Migration = {
  async up(db: Kysely<unknown>) {
    // The value is public (it sits in a web page), so it is stored whole and looked up directly.
    await sql`create table publishable_keys (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      name text not null,
      key text not null unique check (key ~ '^pk_[A-Za-z0-9_-]{43,}$'),
      allowed_origins jsonb not null default '[]'::jsonb check (jsonb_typeof(allowed_origins) = 'array'),
      default_roles jsonb not null default '[]'::jsonb check (jsonb_typeof(default_roles) = 'array'),
      signups_per_hour integer not null default 100 check (signups_per_hour between 1 and 10000),
      status text not null default 'ACTIVE' check (status in ('ACTIVE', 'REVOKED')),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      revoked_at timestamptz
    )`.execute(db)
    await sql`create index publishable_keys_tenant_created on publishable_keys (tenant_id, created_at)`.execute(
      db,
    )
    // A preflight names no key: it is answered for an origin some active key lists (containment, @>).
    await sql`create index publishable_keys_origins on publishable_keys using gin (allowed_origins)`.execute(
      db,
    )
    // One row per accepted ALTCHA solution, by its challenge's signature, until the challenge expires:
    // the primary key makes "used once" one atomic insert. Retention sweeps expired rows.
    await sql`create table signup_challenges_used (
      signature text primary key check (signature ~ '^[0-9a-f]{64}$'),
      expires_at timestamptz not null
    )`.execute(db)
    await sql`create index signup_challenges_used_expiry on signup_challenges_used (expires_at)`.execute(db)
  },

  async down(db: Kysely<unknown>) {
    await sql`drop table signup_challenges_used`.execute(db)
    await sql`drop table publishable_keys`.execute(db)
  },
}
