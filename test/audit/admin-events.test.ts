import t from 'tap'
import type { Test } from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call, unchecked, type As } from '../helpers/call.js'
import {
  auditRows,
  createTenant,
  createUser,
  PASSWORD,
  platformKey,
  platformTenant,
  tokenFor,
  UNKNOWN_ID,
} from '../helpers/fixtures.js'
import type { AuditAction } from '../../src/db/database.js'
import type { OperationId } from '../../generated/routes.js'

// The administrative events of contract section 25: each authenticated call of the listed operations writes
// one row, refusals included (success false, the error code), with `{ target: { type, id }, changed }` and no
// value; the platform's acts on a tenant land in both logs. One success and one refusal per operation.

const app = await buildTestApp(t)
const tenant = await createTenant(app)
const admin = await createUser(app, tenant, { roles: ['admin'] })
const as: As = { token: await tokenFor(app, admin) }
const plain: As = { token: await tokenFor(app, await createUser(app, tenant, { roles: ['user'] })) }
const target = await createUser(app, tenant, { roles: ['user'] })
/** Every secret value this file makes: none may appear in any audit row (the last test). */
const secrets: string[] = [PASSWORD]

/** The last row of the action in the tenant's log, after exactly one more was written. */
async function lastRow(tenantId: string, action: AuditAction, before: number) {
  const rows = await auditRows(app, tenantId, action)
  return { added: rows.length - before, row: rows[rows.length - 1] }
}

/** Calls `op` and asserts the one row it wrote. */
async function expectRow(
  tt: Test,
  op: OperationId,
  who: As,
  req: Record<string, unknown>,
  want: { action: AuditAction; status: number; type: string; id?: string; changed: string[]; error?: string },
  tenantId = tenant.id,
) {
  const before = (await auditRows(app, tenantId, want.action)).length
  // Why the cast: one table drives every operation; each request is checked against the document anyway.
  const res = await call(app, op as 'createRole', who, req as never)
  tt.equal(res.status, want.status, `${op}: ${res.raw.slice(0, 200)}`)
  const { added, row } = await lastRow(tenantId, want.action, before)
  tt.equal(added, 1, `${op}: one ${want.action} row`)
  const id = want.id ?? (res.status < 300 ? (res.data as { id?: string }).id : undefined)
  tt.match(row, {
    success: want.status < 300,
    error_message: want.status < 300 ? null : want.error,
    metadata: { target: { type: want.type, ...(id ? { id } : {}) }, changed: want.changed },
  })
  return res as unknown as { status: number; raw: string; data: Record<string, unknown> }
}

t.test('roles: ROLE_CREATE, ROLE_UPDATE (fields and permissions), ROLE_DELETE', async (t) => {
  const made = await expectRow(
    t,
    'createRole',
    as,
    { body: { name: 'auditor', description: 'Reads' } },
    {
      action: 'ROLE_CREATE',
      status: 201,
      type: 'role',
      changed: ['description', 'name'],
    },
  )
  const id = (made.data as { id: string }).id
  const row = (await auditRows(app, tenant.id, 'ROLE_CREATE')).at(-1)
  t.match(row, { actor_type: 'user', actor_id: admin.id, user_id: null })
  await expectRow(
    t,
    'createRole',
    plain,
    { body: { name: 'nope', undeclaredField: 'caller-chosen' } },
    {
      action: 'ROLE_CREATE',
      status: 403,
      type: 'role',
      changed: ['name'],
      error: 'FORBIDDEN',
    },
  )
  t.same(
    (await auditRows(app, tenant.id, 'ROLE_CREATE')).at(-1)?.metadata.changed,
    ['name'],
    'a refused body’s undeclared field names stay out of the row',
  )
  await expectRow(
    t,
    'updateRole',
    as,
    { params: { id }, body: { description: 'Reads more' } },
    {
      action: 'ROLE_UPDATE',
      status: 200,
      type: 'role',
      id,
      changed: ['description'],
    },
  )
  await expectRow(
    t,
    'updateRole',
    as,
    { params: { id: UNKNOWN_ID }, body: { name: 'x-role' } },
    {
      action: 'ROLE_UPDATE',
      status: 404,
      type: 'role',
      id: UNKNOWN_ID,
      changed: ['name'],
      error: 'ROLE_NOT_FOUND',
    },
  )
  for (const op of ['addRolePermissions', 'removeRolePermissions'] as const)
    await expectRow(
      t,
      op,
      as,
      { params: { id }, body: { permissions: ['users:read'] } },
      {
        action: 'ROLE_UPDATE',
        status: 200,
        type: 'role',
        id,
        changed: ['permissions'],
      },
    )
  await expectRow(
    t,
    'deleteRole',
    as,
    { params: { id } },
    {
      action: 'ROLE_DELETE',
      status: 200,
      type: 'role',
      id,
      changed: [],
    },
  )
  await expectRow(
    t,
    'deleteRole',
    as,
    { params: { id } },
    {
      action: 'ROLE_DELETE',
      status: 404,
      type: 'role',
      id,
      changed: [],
      error: 'ROLE_NOT_FOUND',
    },
  )
})

t.test('permissions: PERMISSION_CREATE, PERMISSION_UPDATE, PERMISSION_DELETE', async (t) => {
  const made = await expectRow(
    t,
    'createPermission',
    as,
    { body: { name: 'invoices:read' } },
    {
      action: 'PERMISSION_CREATE',
      status: 201,
      type: 'permission',
      changed: ['name'],
    },
  )
  const id = (made.data as { id: string }).id
  await expectRow(
    t,
    'createPermission',
    as,
    { body: { name: 'invoices:read' } },
    {
      action: 'PERMISSION_CREATE',
      status: 409,
      type: 'permission',
      changed: ['name'],
      error: 'PERMISSION_ALREADY_EXISTS',
    },
  )
  await expectRow(
    t,
    'updatePermission',
    as,
    { params: { id }, body: { description: 'Read invoices' } },
    {
      action: 'PERMISSION_UPDATE',
      status: 200,
      type: 'permission',
      id,
      changed: ['description'],
    },
  )
  await expectRow(
    t,
    'deletePermission',
    as,
    { params: { id } },
    {
      action: 'PERMISSION_DELETE',
      status: 200,
      type: 'permission',
      id,
      changed: [],
    },
  )
  await expectRow(
    t,
    'deletePermission',
    plain,
    { params: { id } },
    {
      action: 'PERMISSION_DELETE',
      status: 403,
      type: 'permission',
      id,
      changed: [],
      error: 'FORBIDDEN',
    },
  )
})

t.test('users: USER_UPDATE names the user acted upon', async (t) => {
  await expectRow(
    t,
    'updateUser',
    as,
    { params: { userId: target.id }, body: { username: 'renamed-user' } },
    {
      action: 'USER_UPDATE',
      status: 200,
      type: 'user',
      id: target.id,
      changed: ['username'],
    },
  )
  t.match((await auditRows(app, tenant.id, 'USER_UPDATE')).at(-1), { user_id: target.id })
  await expectRow(
    t,
    'updateUser',
    as,
    { params: { userId: UNKNOWN_ID }, body: { username: 'ghost-user' } },
    {
      action: 'USER_UPDATE',
      status: 404,
      type: 'user',
      id: UNKNOWN_ID,
      changed: ['username'],
      error: 'USER_NOT_FOUND',
    },
  )
})

t.test('Client Keys: CREATE, UPDATE, ROTATE, REVOKE; no key value in any row', async (t) => {
  const made = await expectRow(
    t,
    'createClientKey',
    as,
    { body: { name: 'ci', scopes: ['users:read'] } },
    {
      action: 'CLIENT_KEY_CREATE',
      status: 201,
      type: 'client_key',
      changed: ['name', 'scopes'],
    },
  )
  const key = made.data as unknown as { id: string; key: string }
  secrets.push(key.key)
  await expectRow(
    t,
    'updateClientKey',
    as,
    { params: { id: key.id }, body: { name: 'ci-2' } },
    {
      action: 'CLIENT_KEY_UPDATE',
      status: 200,
      type: 'client_key',
      id: key.id,
      changed: ['name'],
    },
  )
  const rotated = await expectRow(
    t,
    'rotateClientKey',
    as,
    { params: { id: key.id } },
    {
      action: 'CLIENT_KEY_ROTATE',
      status: 200,
      type: 'client_key',
      id: key.id,
      changed: ['value'],
    },
  )
  await expectRow(
    t,
    'revokeClientKey',
    as,
    { params: { id: key.id } },
    {
      action: 'CLIENT_KEY_REVOKE',
      status: 200,
      type: 'client_key',
      id: key.id,
      changed: ['status'],
    },
  )
  await expectRow(
    t,
    'revokeClientKey',
    as,
    { params: { id: UNKNOWN_ID } },
    {
      action: 'CLIENT_KEY_REVOKE',
      status: 404,
      type: 'client_key',
      id: UNKNOWN_ID,
      changed: ['status'],
      error: 'CLIENT_KEY_NOT_FOUND',
    },
  )
  const all = JSON.stringify(
    await app.ctx.dbs
      .forTenant(tenant.id)
      .selectFrom('tessera_audit.audit_log as a')
      .selectAll()
      .where('a.tenant_id', '=', tenant.id)
      .execute(),
  )
  secrets.push(String((rotated.data as unknown as { key: string }).key))
  for (const value of [key.key, (rotated.data as unknown as { key: string }).key].filter(Boolean))
    t.notOk(all.includes(value), 'no key value in any row of the log')
})

t.test('publishable keys: CREATE, UPDATE, REVOKE', async (t) => {
  const made = await expectRow(
    t,
    'createPublishableKey',
    as,
    { body: { name: 'site', allowedOrigins: ['https://app.example.test'] } },
    {
      action: 'PUBLISHABLE_KEY_CREATE',
      status: 201,
      type: 'publishable_key',
      changed: ['allowedOrigins', 'name'],
    },
  )
  const id = (made.data as { id: string }).id
  secrets.push(String((made.data as { key?: string }).key))
  await expectRow(
    t,
    'updatePublishableKey',
    as,
    { params: { id }, body: { name: 'site-2' } },
    {
      action: 'PUBLISHABLE_KEY_UPDATE',
      status: 200,
      type: 'publishable_key',
      id,
      changed: ['name'],
    },
  )
  await expectRow(
    t,
    'revokePublishableKey',
    as,
    { params: { id } },
    {
      action: 'PUBLISHABLE_KEY_REVOKE',
      status: 200,
      type: 'publishable_key',
      id,
      changed: ['status'],
    },
  )
})

t.test('tenants: the platform’s acts land in the platform’s log and in the tenant’s own', async (t) => {
  const platform = await platformTenant(app)
  const made = await expectRow(
    t,
    'createTenant',
    platformKey,
    { body: { code: 'audited-co', name: 'Audited Co' } },
    { action: 'TENANT_CREATE', status: 201, type: 'tenant', changed: ['code', 'name'] },
    platform.id,
  )
  const id = (made.data as { id: string }).id
  t.match(
    (await auditRows(app, id, 'TENANT_CREATE')).at(-1),
    {
      success: true,
      actor_type: 'client_key',
      metadata: { target: { type: 'tenant', id }, changed: ['code', 'name'] },
    },
    'and in the new tenant’s own log',
  )
  await expectRow(
    t,
    'updateTenant',
    platformKey,
    { params: { id }, body: { name: 'Audited Company' } },
    {
      action: 'TENANT_UPDATE',
      status: 200,
      type: 'tenant',
      id,
      changed: ['name'],
    },
    platform.id,
  )
  t.equal((await auditRows(app, id, 'TENANT_UPDATE')).length, 1, 'the tenant’s own log has it too')
  await expectRow(
    t,
    'updateTenant',
    as,
    { params: { id }, body: { name: 'Hijacked' } },
    {
      action: 'TENANT_UPDATE',
      status: 404,
      type: 'tenant',
      id,
      changed: ['name'],
      error: 'TENANT_NOT_FOUND',
    },
  )
  t.equal(
    (await auditRows(app, id, 'TENANT_UPDATE')).length,
    1,
    'another tenant’s refused act stays in its own log',
  )
  await expectRow(
    t,
    'deleteTenant',
    platformKey,
    { params: { id } },
    {
      action: 'TENANT_DELETE',
      status: 200,
      type: 'tenant',
      id,
      changed: [],
    },
    platform.id,
  )
})

t.test('listAuthLogs: the actorId and targetId filters', async (t) => {
  const role = await call(app, 'createRole', as, { body: { name: 'filtered' } })
  t.equal(role.status, 201)
  const byTarget = await call(app, 'listAuthLogs', as, { query: { targetId: role.data.id } })
  t.equal(byTarget.status, 200, byTarget.raw)
  t.same(
    byTarget.data.items.map((r) => r.action),
    ['ROLE_CREATE'],
    'the rows about that role only',
  )
  t.same(
    byTarget.data.items[0]?.metadata,
    { target: { type: 'role', id: role.data.id }, changed: ['name'] },
    'the answer carries the target and the changed fields, as the row holds them',
  )
  const byActor = await call(app, 'listAuthLogs', as, { query: { actorId: admin.id, action: 'ROLE_CREATE' } })
  t.ok(byActor.data.items.length >= 2, 'the admin’s role creations')
  t.ok(
    byActor.data.items.every((r) => r.actor_id === admin.id),
    'every row acted by the admin',
  )
  const nobody = await call(app, 'listAuthLogs', as, { query: { actorId: UNKNOWN_ID } })
  t.same(nobody.data.items, [], 'no row for an actor that never acted')
})

t.test('sections 23 and 24: OAUTH_CLIENT_* and IDENTITY_PROVIDER_* refusals are rows too', async (t) => {
  await expectRow(
    t,
    'createOAuthClient',
    plain,
    { body: { name: 'App', redirectUris: ['https://app.example.test/cb'] } },
    {
      action: 'OAUTH_CLIENT_CREATE',
      status: 403,
      type: 'oauth_client',
      changed: ['name', 'redirectUris'],
      error: 'FORBIDDEN',
    },
  )
  await expectRow(
    t,
    'deleteOAuthClient',
    as,
    { params: { id: UNKNOWN_ID } },
    {
      action: 'OAUTH_CLIENT_DELETE',
      status: 404,
      type: 'oauth_client',
      id: UNKNOWN_ID,
      changed: [],
      error: 'OAUTH_CLIENT_NOT_FOUND',
    },
  )
  await expectRow(
    t,
    'updateIdentityProvider',
    as,
    { params: { id: UNKNOWN_ID }, body: { name: 'X' } },
    {
      action: 'IDENTITY_PROVIDER_UPDATE',
      status: 404,
      type: 'identity_provider',
      id: UNKNOWN_ID,
      changed: ['name'],
      error: 'IDENTITY_PROVIDER_NOT_FOUND',
    },
  )
  await expectRow(
    t,
    'deleteIdentityProvider',
    plain,
    { params: { id: UNKNOWN_ID } },
    {
      action: 'IDENTITY_PROVIDER_DELETE',
      status: 403,
      type: 'identity_provider',
      id: UNKNOWN_ID,
      changed: [],
      error: 'FORBIDDEN',
    },
  )
  const made = await call(app, 'createOAuthClient', as, {
    body: { name: 'App', type: 'confidential', redirectUris: ['https://app.example.test/cb'] },
  })
  t.equal(made.status, 201, made.raw)
  secrets.push(String(made.data.clientSecret))
  const rows = (await auditRows(app, tenant.id, 'OAUTH_CLIENT_CREATE')).filter((r) => r.success)
  t.equal(rows.length, 1, 'a success is the service’s one row, not a second')
  t.match(rows[0]?.metadata, {
    target: { type: 'oauth_client', id: made.data.id },
    changed: ['name', 'redirectUris'],
  })
})

t.test('no secret, key value or password in any audit row of any tenant', async (t) => {
  const generated = await call(app, 'generateJwtSecret', as)
  t.equal(generated.status, 200, generated.raw)
  secrets.push(String(generated.data.secret))
  const rows = await app.ctx.dbs.main.selectFrom('tessera_audit.audit_log').selectAll().execute()
  t.ok(rows.length >= 30, `${rows.length} rows searched`)
  const all = JSON.stringify(rows)
  const values = secrets.filter((v) => v && v !== 'undefined')
  t.ok(values.length >= 6, `${values.length} secret values looked for`)
  for (const value of values) t.notOk(all.includes(value), `not in any row: ${value.slice(0, 6)}…`)
})

t.test(
  'updateRole, updateUser: a malformed path id is a 400 row with no target id, never the raw text',
  async (t) => {
    for (const [op, req, action, type] of [
      ['updateRole', { params: { id: 'not\na-uuid' }, body: { description: 'x' } }, 'ROLE_UPDATE', 'role'],
      [
        'updateUser',
        { params: { userId: 'NOT-a-uuid' }, body: { username: 'x-user' } },
        'USER_UPDATE',
        'user',
      ],
    ] as const) {
      const before = (await auditRows(app, tenant.id, action)).length
      const res = await call(app, op as 'updateRole', as, unchecked(req))
      t.equal(res.status, 400, res.raw.slice(0, 200))
      const { added, row } = await lastRow(tenant.id, action, before)
      t.equal(added, 1, `${op}: the refusal's row is written`)
      t.match(row, { success: false, error_message: 'VALIDATION_ERROR', user_id: null })
      t.same((row?.metadata as { target?: unknown }).target, { type }, 'the target without an id')
    }
  },
)

t.test(
  'updateTenantConfig: the gate’s and the validator’s refusals are TENANT_CONFIG_UPDATE rows too',
  async (t) => {
    const member: As = { token: await tokenFor(app, target) }
    const before = (await auditRows(app, tenant.id, 'TENANT_CONFIG_UPDATE')).length
    const forbidden = await call(app, 'updateTenantConfig', member, {
      params: { id: tenant.id },
      body: { accessTokenExpiresIn: 600 },
    })
    t.equal(forbidden.code, 'FORBIDDEN')
    const invalid = await call(
      app,
      'updateTenantConfig',
      as,
      unchecked({ params: { id: tenant.id }, body: { accessTokenExpiresIn: 'soon' } }),
    )
    t.equal(invalid.code, 'VALIDATION_ERROR')
    const ok = await call(app, 'updateTenantConfig', as, {
      params: { id: tenant.id },
      body: { accessTokenExpiresIn: 600 },
    })
    t.equal(ok.status, 200)
    const rows = (await auditRows(app, tenant.id, 'TENANT_CONFIG_UPDATE')).slice(before)
    t.match(
      rows.map((r) => [
        r.success,
        r.error_message,
        r.actor_id,
        (r.metadata as { changed?: unknown }).changed,
      ]),
      [
        [false, 'FORBIDDEN', target.id, ['accessTokenExpiresIn']],
        [false, 'VALIDATION_ERROR', admin.id, ['accessTokenExpiresIn']],
        [true, null, admin.id, ['accessTokenExpiresIn']],
      ],
      'one row per call, the success one once',
    )
  },
)
