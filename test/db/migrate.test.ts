import { Migrator, NO_MIGRATIONS, sql, type Kysely } from 'kysely'
import t from 'tap'
import { openPostgres } from '../../src/db/connect.js'
import type { Database } from '../../src/db/database.js'
import { MIGRATION_LOCK_TABLE, MIGRATION_TABLE, migrateToLatest } from '../../src/db/migrate.js'
import { migrations } from '../../src/db/migrations/index.js'
import { backends, forEachBackend, openTestDatabase } from '../helpers/db.js'

const TABLES = [
  'audit_hourly_counts',
  'audit_rollup_marks',
  'client_key_usage',
  'client_key_usage_hourly',
  'client_key_usage_marks',
  'client_keys',
  'email_tokens',
  'federation_codes',
  'federation_flows',
  'federation_link_tokens',
  'identity_providers',
  'login_throttle',
  'mail_outbox',
  'mfa_tokens',
  'oauth_clients',
  'oidc_payloads',
  'otp_recovery_codes',
  'passkey_challenges',
  'passkeys',
  'permissions',
  'publishable_keys',
  'refresh_tokens',
  'role_permissions',
  'roles',
  'service_settings',
  'sessions',
  'signup_challenges_used',
  'tenant_databases',
  'tenant_secrets',
  'tenant_signing_keys',
  'tenants',
  'user_identities',
  'user_otp',
  'user_permissions',
  'user_roles',
  'users',
]

/** The audit owner's schema (migration 0008). */
const AUDIT_TABLES = ['audit_log', 'relocations', 'settings']

async function publicTables(db: Kysely<Database>, schema = 'public'): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select table_name as name from information_schema.tables
    where table_schema = ${schema} and table_name not like 'tessera_migrations%' order by 1`.execute(db)
  return rows.map((r) => r.name)
}

t.test('applies every migration once; a second run applies nothing', (t) =>
  forEachBackend(
    t,
    async (t, { db }) => {
      t.same(await migrateToLatest(db), Object.keys(migrations))
      t.same(await migrateToLatest(db), [])
      t.same(await publicTables(db), TABLES)
      t.same(await publicTables(db, 'tessera_audit'), AUDIT_TABLES)
      const builtins = await db
        .selectFrom('permissions')
        .select(['name', 'resource', 'action', 'description', 'is_system'])
        .where('tenant_id', 'is', null)
        .execute()
      // 26, the four oauth-clients:* of the OpenID provider (migration 0016), and the four
      // identity-providers:* of sign-in with other providers (0017).
      t.equal(builtins.length, 34)
      t.ok(builtins.every((p) => p.is_system && p.description && p.name === `${p.resource}:${p.action}`))
      t.ok(builtins.some((p) => p.name === 'admin:*'))
    },
    { empty: true },
  ),
)

t.test('down then up again leaves the same tables', (t) =>
  forEachBackend(
    t,
    async (t, { db }) => {
      await migrateToLatest(db)
      const migrator = new Migrator({
        db,
        provider: { getMigrations: async () => migrations },
        migrationTableName: MIGRATION_TABLE,
        migrationLockTableName: MIGRATION_LOCK_TABLE,
      })
      // Why to NO_MIGRATIONS: migrateDown() undoes only the last migration.
      const down = await migrator.migrateTo(NO_MIGRATIONS)
      t.equal(down.error, undefined)
      t.same(await publicTables(db), [])
      t.same(await publicTables(db, 'tessera_audit'), [])
      t.same(await migrateToLatest(db), Object.keys(migrations))
      t.same(await publicTables(db), TABLES)
      t.same(await publicTables(db, 'tessera_audit'), AUDIT_TABLES)
    },
    { empty: true },
  ),
)

t.test('concurrent migrators on one PGlite apply each migration once', async (t) => {
  const tdb = await openTestDatabase('pglite', { empty: true })
  t.teardown(tdb.close)
  const results = await Promise.all([
    migrateToLatest(tdb.db),
    migrateToLatest(tdb.db),
    migrateToLatest(tdb.db),
  ])
  t.same(results.flat(), Object.keys(migrations))
})

t.test(
  'instances starting together on one PostgreSQL apply each migration once',
  { skip: backends().includes('postgres') ? false : 'TEST_DATABASE_URL is not set' },
  async (t) => {
    const tdb = await openTestDatabase('postgres', { empty: true })
    t.teardown(tdb.close)
    // Separate pools, as separate service instances would have.
    const instances = Array.from({ length: 6 }, () => openPostgres(tdb.url, { poolMax: 2 }))
    t.teardown(() => Promise.all(instances.map((i) => i.close())))
    const results = await Promise.all(instances.map((i) => migrateToLatest(i.db)))
    t.same(results.flat(), Object.keys(migrations), 'one instance applied, the others found nothing to do')
    t.same(await publicTables(tdb.db), TABLES)
    const { rows } = await sql<{
      n: number
    }>`select count(*) as n from ${sql.table(MIGRATION_TABLE)}`.execute(tdb.db)
    t.equal(rows[0]?.n, Object.keys(migrations).length)
  },
)

t.test('constraints hold on both back-ends', (t) =>
  forEachBackend(t, async (t, { db }) => {
    const tenant = await db
      .insertInto('tenants')
      .values({ code: 'acme', name: 'Acme' })
      .returning(['id', 'status', 'auth_config', 'metadata', 'created_at'])
      .executeTakeFirstOrThrow()
    t.equal(tenant.status, 'ACTIVE')
    t.same(tenant.auth_config, {})
    t.same(tenant.metadata, {})
    t.type(tenant.created_at, Date)
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e: { code?: string }) => e.code,
      )
    t.equal(await code(db.insertInto('tenants').values({ code: 'Bad Code', name: 'x' }).execute()), '23514')
    const user = { tenant_id: tenant.id, password_hash: 'h' }
    await db
      .insertInto('users')
      .values({ ...user, email: 'Ann@Example.test' })
      .execute()
    t.equal(
      await code(
        db
          .insertInto('users')
          .values({ ...user, email: 'ann@example.TEST' })
          .execute(),
      ),
      '23505',
    )
    t.equal(await code(db.insertInto('users').values(user).execute()), '23514', 'an identifier is required')
    t.equal(
      await code(
        db
          .insertInto('users')
          .values({ ...user, cpf_cnpj: '123.456' })
          .execute(),
      ),
      '23514',
    )
    t.equal(
      await code(db.insertInto('roles').values({ tenant_id: tenant.id, name: 'r', level: 1001 }).execute()),
      '23514',
    )
    const custom = { tenant_id: tenant.id, name: 'reports:read', resource: 'reports', action: 'read' }
    await db.insertInto('permissions').values(custom).execute()
    t.equal(await code(db.insertInto('permissions').values(custom).execute()), '23505')
    t.equal(
      await code(
        db
          .insertInto('permissions')
          .values({ ...custom, name: 'Reports:Read' })
          .execute(),
      ),
      '23514',
    )
    await db.deleteFrom('tenants').where('id', '=', tenant.id).execute()
    const left = await db.selectFrom('users').select('id').where('tenant_id', '=', tenant.id).execute()
    t.same(left, [], 'deleting a tenant cascades to its users')
  }),
)
