import { sql, type Kysely, type Migration } from 'kysely'
import { asOwner, whoAmI } from './0002_audit_guard.js'

// The third security review (contract section 26, docs/decisions.md D27):
// - `client_keys.behind_user_ids`: every user who received a value of the key (its creator, each rotator);
//   the key may not change the credentials of any of them.
// - `users.security_version`: bumped by a trigger whenever the password, email or status changes, on every
//   path that writes them; a mail token records the version it was issued at and dies when it moves, even
//   when the change is undone.
// - `email_tokens.purpose` gains `change` (POST /me/email: the token's `email` is the new address).
// - `publishable_keys.created_by`: the user who made the key (the API's `createdBy`).
// - The audit action codes of section 25 and the email change's two.
// Frozen once released: the action list is spelled out.

const ACTIONS_0013 = sql`'LOGIN', 'LOGOUT', 'REFRESH_TOKEN', 'REGISTER', 'USER_DELETE', 'ROLE_ASSIGN',
  'ROLE_REMOVE', 'PERMISSION_GRANT', 'PERMISSION_REVOKE', 'PASSWORD_CHANGED', 'PASSWORD_RESET',
  'SESSIONS_REVOKED', 'ACCOUNT_LOCKED', 'ACCOUNT_UNLOCKED', 'OTP_ENABLED', 'OTP_DISABLED',
  'OTP_RECOVERY_CODES_RENEWED', 'PASSWORD_RESET_REQUESTED', 'EMAIL_VERIFICATION_SENT', 'EMAIL_VERIFIED',
  'PASSKEY_ADDED', 'PASSKEY_REMOVED'`
const ACTIONS_0015 = sql`${ACTIONS_0013}, 'EMAIL_CHANGE_REQUESTED', 'EMAIL_CHANGED',
  'ROLE_CREATE', 'ROLE_UPDATE', 'ROLE_DELETE', 'PERMISSION_CREATE', 'PERMISSION_UPDATE', 'PERMISSION_DELETE',
  'USER_UPDATE', 'TENANT_CREATE', 'TENANT_UPDATE', 'TENANT_DELETE', 'TENANT_CONFIG_UPDATE',
  'TENANT_DATABASE_ROUTE', 'CLIENT_KEY_CREATE', 'CLIENT_KEY_UPDATE', 'CLIENT_KEY_ROTATE', 'CLIENT_KEY_REVOKE',
  'PUBLISHABLE_KEY_CREATE', 'PUBLISHABLE_KEY_UPDATE', 'PUBLISHABLE_KEY_REVOKE'`

/** Replaces the action check of tessera_audit.audit_log (0008 moved it there), as its owner. */
async function setActionCheck(db: Kysely<unknown>, actions: typeof ACTIONS_0013): Promise<void> {
  const who = await whoAmI(db)
  await asOwner(db, who, async () => {
    if (!who.superuser) await sql`set local role tessera_audit_owner`.execute(db)
    await sql`alter table tessera_audit.audit_log drop constraint audit_log_action_check`.execute(db)
    await sql`alter table tessera_audit.audit_log add constraint audit_log_action_check
      check (action in (${actions}))`.execute(db)
    if (!who.superuser) await sql`reset role`.execute(db)
  })
}

export const thirdReview: Migration = {
  async up(db: Kysely<unknown>) {
    await setActionCheck(db, ACTIONS_0015)
    await sql`alter table client_keys add column behind_user_ids jsonb not null default '[]'::jsonb`.execute(
      db,
    )
    await sql`update client_keys set behind_user_ids = jsonb_build_array(behalf_user_id)
      where behalf_user_id is not null`.execute(db)
    await sql`alter table users add column security_version integer not null default 0`.execute(db)
    // Why a trigger: the password, email and status are written by several modules (password change and
    // reset, PATCH /users, the email change); one rule at the table cannot be forgotten by a new path.
    await sql`create function users_bump_security_version() returns trigger language plpgsql as $$
      begin
        if new.password_hash is distinct from old.password_hash
           or new.email is distinct from old.email
           or new.status is distinct from old.status then
          new.security_version := old.security_version + 1;
        end if;
        return new;
      end $$`.execute(db)
    await sql`create trigger users_security_version before update on users
      for each row execute function users_bump_security_version()`.execute(db)
    await sql`alter table email_tokens add column user_version integer not null default 0`.execute(db)
    await sql`alter table email_tokens drop constraint email_tokens_purpose_check`.execute(db)
    await sql`alter table email_tokens add constraint email_tokens_purpose_check
      check (purpose in ('reset', 'verify', 'change'))`.execute(db)
    await sql`alter table publishable_keys add column created_by uuid`.execute(db)
  },
  async down(db: Kysely<unknown>) {
    await sql`alter table publishable_keys drop column created_by`.execute(db)
    await sql`delete from email_tokens where purpose = 'change'`.execute(db)
    await sql`alter table email_tokens drop constraint email_tokens_purpose_check`.execute(db)
    await sql`alter table email_tokens add constraint email_tokens_purpose_check
      check (purpose in ('reset', 'verify'))`.execute(db)
    await sql`alter table email_tokens drop column user_version`.execute(db)
    await sql`drop trigger users_security_version on users`.execute(db)
    await sql`drop function users_bump_security_version()`.execute(db)
    await sql`alter table users drop column security_version`.execute(db)
    await sql`alter table client_keys drop column behind_user_ids`.execute(db)
    await setActionCheck(db, ACTIONS_0013)
  },
}
