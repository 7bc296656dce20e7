import { sql, type Kysely, type Migration } from 'kysely'
import { asOwner, whoAmI } from './0002_audit_guard.js'

// Account lifecycle (openapi/paths/account.yaml): five audit action codes, and the account-throttling
// counters kept in the database when the service has no Redis (docs/decisions.md D12).
// A migration is frozen once released: the action lists are spelled out here.

const ACTIONS_0001 = sql`'LOGIN', 'LOGOUT', 'REFRESH_TOKEN', 'REGISTER', 'USER_DELETE', 'ROLE_ASSIGN',
  'ROLE_REMOVE', 'PERMISSION_GRANT', 'PERMISSION_REVOKE'`
export const ACTIONS_0003 = sql`${ACTIONS_0001}, 'PASSWORD_CHANGED', 'PASSWORD_RESET', 'SESSIONS_REVOKED',
  'ACCOUNT_LOCKED', 'ACCOUNT_UNLOCKED'`

/** Replaces audit_log's action check, as its owner (tessera_audit_owner owns the table since 0002). */
export async function setActionCheck(db: Kysely<unknown>, actions: typeof ACTIONS_0001): Promise<void> {
  const who = await whoAmI(db)
  await asOwner(db, who, async () => {
    if (!who.superuser) await sql`set local role tessera_audit_owner`.execute(db)
    await sql`alter table audit_log drop constraint audit_log_action_check`.execute(db)
    await sql`alter table audit_log add constraint audit_log_action_check check (action in (${actions}))`.execute(
      db,
    )
    if (!who.superuser) await sql`reset role`.execute(db)
  })
}

export const accountLifecycle: Migration = {
  async up(db: Kysely<unknown>) {
    await setActionCheck(db, ACTIONS_0003)
    // One row per (tenant, normalised identifier) that failed a login lately: `failures` since
    // `window_started_at`, the running lock's end, and how many locks came before (the doubling).
    await sql`create table login_throttle (
      tenant_id uuid not null references tenants(id) on delete cascade,
      identifier text not null,
      failures integer not null default 0,
      window_started_at timestamptz not null,
      locked_until timestamptz,
      locks integer not null default 0,
      updated_at timestamptz not null default now(),
      primary key (tenant_id, identifier)
    )`.execute(db)
  },

  async down(db: Kysely<unknown>) {
    await sql`drop table login_throttle`.execute(db)
    await setActionCheck(db, ACTIONS_0001)
  },
}
