import { sql, type Kysely, type Migration } from 'kysely'

// Asymmetric signing keys per tenant (`signingAlgorithm` EdDSA or ES256; openapi/paths/tenants.yaml,
// docs/decisions.md D14). Kept in the main database beside tenant_secrets. Frozen once released.

export const signingKeys: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create table tenant_signing_keys (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants(id) on delete cascade,
      kid text not null unique,
      algorithm text not null check (algorithm in ('EdDSA', 'ES256')),
      private_key_enc text not null,
      public_jwk jsonb not null,
      created_at timestamptz not null default now(),
      retired_at timestamptz,
      expires_at timestamptz
    )`.execute(db)
    // At most one current key per tenant.
    await sql`create unique index tenant_signing_keys_current on tenant_signing_keys (tenant_id)
      where retired_at is null`.execute(db)
  },

  async down(db: Kysely<unknown>) {
    await sql`drop table tenant_signing_keys`.execute(db)
  },
}
