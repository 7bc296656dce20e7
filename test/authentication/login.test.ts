import t from 'tap'
import { hash as argon2Hash } from '@node-rs/argon2'
import { hashSync } from '@node-rs/bcrypt'
import { buildTestApp } from '../helpers/app.js'
import { call, login, loginAs, refresh, unchecked, type BodyOf } from '../helpers/call.js'
import {
  activeSessions,
  createTenant,
  createUser,
  deactivateTenant,
  PASSWORD,
  userRow,
} from '../helpers/fixtures.js'
import { decodeJwtUnverified } from '../../src/lib/jwt.js'

t.test('login: POST /login', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant, { roles: ['admin'] })
  const signIn = (body: BodyOf<'login'>) => call(app, 'login', null, { body })
  const auditRows = (userId: string | null) =>
    app.ctx.dbs
      .forTenant(tenant.id)
      .selectFrom('tessera_audit.audit_log')
      .selectAll()
      .where('tenant_id', '=', tenant.id)
      .where('action', '=', 'LOGIN')
      .where('user_id', userId === null ? 'is' : '=', userId)
      .execute()

  t.test('200 with tokens, user and claims', async (t) => {
    const res = await login(app, tenant.code.toUpperCase(), ` ${user.email.toUpperCase()} `)
    t.equal(res.status, 200)
    const { data } = res
    t.equal(data.expiresIn, 900)
    t.same(data.user, {
      id: user.id,
      email: user.email,
      username: null,
      tenantId: tenant.id,
      tenantCode: tenant.code,
    })
    t.match(data.refreshToken, /^[A-Za-z0-9_-]{43,}$/)
    const decoded = decodeJwtUnverified(data.accessToken)
    t.equal(decoded?.header.alg, 'HS256')
    t.equal(decoded?.header.typ, 'JWT')
    t.ok(decoded?.header.kid)
    const c = decoded?.payload ?? {}
    t.equal(c.sub, user.id)
    t.equal(c.userId, user.id)
    t.equal(c.tenantId, tenant.id)
    t.equal(c.tenantCode, tenant.code)
    t.same(c.roles, ['admin'])
    t.ok((c.permissions as string[]).includes('users:read'))
    t.notOk((c.permissions as string[]).includes('tenants:create'), 'tenant admins never hold tenants:create')
    t.equal(Number(c.exp) - Number(c.iat), 900)
    t.ok(c.sid && c.jti)
    const rows = await auditRows(user.id)
    t.ok(
      rows.some((r) => r.success && r.ip_address),
      'a success LOGIN row with the ip',
    )
  })

  t.test('404 TENANT_NOT_FOUND for an unknown tenant code', async (t) => {
    const res = await login(app, 'no-such-tenant', user.email)
    t.equal(res.status, 404)
    t.equal(res.code, 'TENANT_NOT_FOUND')
  })

  t.test(
    '401 INVALID_CREDENTIALS: unknown identifier and wrong password answer byte-identically',
    async (t) => {
      const unknown = await login(app, tenant.code, 'nobody@example.test')
      const wrong = await loginAs(app, user, { password: 'not-the-password' })
      t.equal(unknown.status, 401)
      t.equal(wrong.status, 401)
      t.equal(unknown.raw, wrong.raw)
      t.equal(unknown.code, 'INVALID_CREDENTIALS')
      const strip = (h: Record<string, unknown>) => {
        const {
          'x-request-id': _a,
          date: _b,
          'x-ratelimit-remaining': _c,
          'x-ratelimit-reset': _d,
          ...rest
        } = h
        return rest
      }
      t.same(strip(unknown.headers), strip(wrong.headers), 'same headers but the request id')
      t.ok(
        (await auditRows(null)).some((r) => !r.success && r.error_message),
        'failure row without user for unknown',
      )
      t.ok(
        (await auditRows(user.id)).some((r) => !r.success),
        'failure row with user for a wrong password',
      )
    },
  )

  t.test('401 for an identifier kind the tenant has not enabled', async (t) => {
    await createUser(app, tenant, { username: 'alice_u' })
    const res = await login(app, tenant.code, 'alice_u')
    t.equal(res.status, 401)
    t.equal(res.code, 'INVALID_CREDENTIALS')
  })

  t.test('403 USER_INACTIVE for a right password on a suspended user', async (t) => {
    const suspended = await createUser(app, tenant, { status: 'SUSPENDED' })
    const res = await loginAs(app, suspended)
    t.equal(res.status, 403)
    t.equal(res.code, 'USER_INACTIVE')
    const wrong = await loginAs(app, suspended, { password: 'nope-nope-nope' })
    t.equal(wrong.code, 'INVALID_CREDENTIALS', 'a wrong password reveals nothing about status')
  })

  t.test('400 VALIDATION_ERROR for a missing field', async (t) => {
    const res = await signIn(unchecked({ tenantCode: tenant.code, identifier: user.email }))
    t.equal(res.status, 400)
    t.equal(res.code, 'VALIDATION_ERROR')
  })
})

t.test('login: username and cpf_cnpj identifiers when enabled', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app, { loginIdentifiers: ['username', 'cpf_cnpj'] })
  await createUser(app, tenant, { username: 'Bob.Smith' })
  const ok = await login(app, tenant.code, 'bob.smith')
  t.equal(ok.status, 200, 'username compared case-insensitively')
  const db = app.ctx.dbs.forTenant(tenant.id)
  const u = await createUser(app, tenant, { username: 'carla' })
  await db.updateTable('users').set({ cpf_cnpj: '52998224725' }).where('id', '=', u.id).execute()
  const cpf = await login(app, tenant.code, '529.982.247-25')
  t.equal(cpf.status, 200, 'CPF with punctuation')
  const email = await loginAs(app, u)
  t.equal(email.status, 401, 'email not enabled in this tenant')
})

t.test('login: 404 TENANT_NOT_FOUND for an INACTIVE tenant, and a failure audit row', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant)
  await deactivateTenant(app, tenant.id)
  const res = await loginAs(app, user)
  t.equal(res.status, 404)
  t.equal(res.code, 'TENANT_NOT_FOUND')
  const rows = await app.ctx.dbs.main
    .selectFrom('tessera_audit.audit_log')
    .selectAll()
    .where('tenant_id', '=', tenant.id)
    .execute()
  t.equal(rows.length, 1)
  t.equal(rows[0]?.success, false)
})

t.test('login: imported hashes verify and are upgraded to bcrypt cost 12', async (t) => {
  const app = await buildTestApp(t, {}, { passwordCost: 12 })
  const tenant = await createTenant(app)
  const db = app.ctx.dbs.forTenant(tenant.id)
  const a = await createUser(app, tenant)
  const b = await createUser(app, tenant)
  await db
    .updateTable('users')
    .set({ password_hash: hashSync(PASSWORD, 4).replace('$2y$', '$2a$') })
    .where('id', '=', a.id)
    .execute()
  await db
    .updateTable('users')
    .set({ password_hash: await argon2Hash(PASSWORD) })
    .where('id', '=', b.id)
    .execute()
  for (const u of [a, b]) {
    const res = await loginAs(app, u)
    t.equal(res.status, 200)
    const row = await userRow(app, tenant.id, u.id)
    t.match(row.password_hash, /^\$2b\$12\$/, 'rehashed to bcrypt cost 12')
  }
})

t.test(
  'login: session limit, the oldest sessions are revoked, never more than the limit active',
  async (t) => {
    const app = await buildTestApp(t)
    const tenant = await createTenant(app, { maxConcurrentSessions: 2 })
    const user = await createUser(app, tenant)
    const signIn = () => loginAs(app, user)
    const first = (await signIn()).data
    await signIn()
    await signIn()
    const refreshFirst = await refresh(app, first.refreshToken)
    t.equal(refreshFirst.status, 401, 'the oldest session was evicted')
    t.equal(refreshFirst.code, 'INVALID_REFRESH_TOKEN')
    const results = await Promise.all([signIn(), signIn(), signIn()])
    t.ok(results.every((r) => r.status === 200))
    const active = await activeSessions(app, user)
    t.equal(active.length, 2, 'concurrent logins never leave more than the limit')
  },
)

t.test('login: a password over 72 bytes never logs in on its first 72', async (t) => {
  const app = await buildTestApp(t)
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant)
  const exact = 'Aa1!'.repeat(18) // 72 bytes, all that bcrypt reads
  await app.ctx.dbs
    .forTenant(tenant.id)
    .updateTable('users')
    .set({ password_hash: await app.ctx.hasher.hash(exact) })
    .where('id', '=', user.id)
    .execute()
  const signIn = (password: string) => loginAs(app, user, { password })
  t.equal((await signIn(exact)).status, 200, '72 bytes log in')
  const longer = await signIn(exact + 'anything')
  t.equal(longer.status, 401, '72 bytes plus a suffix do not')
  t.equal(longer.code, 'INVALID_CREDENTIALS')
})
