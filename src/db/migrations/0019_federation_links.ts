import { sql, type Kysely, type Migration } from 'kysely'

// A person's own links (contract section 24): `federation_link_tokens` holds the single-use token of
// POST /me/identities/link-token, stored as its SHA-256, dead after `expires_at` (60 seconds). The authorize step
// of `intent=link` takes it and writes its user into the flow (`federation_flows.link_user_id`).

export const federationLinks: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create table federation_link_tokens (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      token_hash text not null unique check (token_hash ~ '^[0-9a-f]{64}$'),
      created_at timestamptz not null default now(),
      expires_at timestamptz not null
    )`.execute(db)
    await sql`create index federation_link_tokens_expires on federation_link_tokens (expires_at)`.execute(db)
  },
  async down(db: Kysely<unknown>) {
    await sql`drop table federation_link_tokens`.execute(db)
  },
}
