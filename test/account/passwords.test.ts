import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { byKey, bySelf, byUser, oneAuditRow } from '../helpers/audit.js'
import { call, login, loginTokens, refresh, type As, type BodyOf, unchecked } from '../helpers/call.js'
import { sessionsOf } from '../helpers/sessions.js'
import {
  auditRows,
  createKey,
  createTenant,
  createUser,
  freshIp,
  insertRole,
  keyCred,
  PASSWORD,
  sidOf,
  UNKNOWN_ID,
  userRow,
  userWithToken,
  type UserFx,
} from '../helpers/fixtures.js'

// changeMyPassword (POST /me/password) and resetUserPassword (PUT /users/{userId}/password):
// openapi/paths/account.yaml, contract section 12. One app for the file, a fresh tenant per test.

const app = await buildTestApp(t)

const NEW_PASSWORD = 'Brand-new-secret-42'
const WRONG = 'Not-the-password-17'

const changePassword = (token: string, body: BodyOf<'changeMyPassword'>, ip?: string) =>
  call(app, 'changeMyPassword', { token, ip }, { body })

const resetPassword = (as: As, userId: string, body: BodyOf<'resetUserPassword'>) =>
  call(app, 'resetUserPassword', as, { params: { userId }, body })

const hashOf = async (user: UserFx) => (await userRow(app, user.tenant.id, user.id)).password_hash

/** A fresh tenant's user logged in twice (the calling session and another), and its hash before the call. */
const userWithTwoSessions = async () => {
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant, { roles: ['user'] })
  const mine = await loginTokens(app, user)
  const other = await loginTokens(app, user)
  return { tenant, user, mine, other, before: await hashOf(user) }
}

// ---------------------------------------------------------------------------------------------------
// changeMyPassword
// ---------------------------------------------------------------------------------------------------

t.test(
  'changeMyPassword: 200 the new password logs in, the old one does not; other sessions revoked and counted, the calling one stays',
  async (t) => {
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant, { roles: ['user'] })
    const mine = await loginTokens(app, user)
    const other1 = await loginTokens(app, user)
    const other2 = await loginTokens(app, user)
    // Not counted: a session already logged out, and one past its expiry that nobody revoked.
    const loggedOut = await loginTokens(app, user)
    const out = await call(
      app,
      'logout',
      { token: loggedOut.accessToken },
      {
        body: {
          refreshToken: loggedOut.refreshToken,
        },
      },
    )
    t.equal(out.status, 200)
    const expired = await loginTokens(app, user)
    await app.ctx.dbs
      .forTenant(tenant.id)
      .updateTable('sessions')
      .set({ expires_at: new Date(Date.now() - 3_600_000) })
      .where('id', '=', sidOf(expired.accessToken))
      .execute()
    const before = await hashOf(user)

    const res = await changePassword(mine.accessToken, {
      currentPassword: PASSWORD,
      newPassword: NEW_PASSWORD,
    })
    t.equal(res.status, 200)
    t.same(res.data, { changed: true, sessionsRevoked: 2 })
    t.not(await hashOf(user), before, 'users.password_hash changed')

    const calling = await refresh(app, mine.refreshToken)
    t.equal(calling.status, 200, "the calling session's refresh token still refreshes")
    for (const s of [other1, other2]) {
      const r = await refresh(app, s.refreshToken)
      t.equal(r.status, 401, "another session's refresh token is dead")
      t.equal(r.code, 'INVALID_REFRESH_TOKEN')
    }

    const sessions = await sessionsOf(app, user)
    const byId = new Map(sessions.map((s) => [s.id, s]))
    t.equal(byId.get(sidOf(mine.accessToken))?.revoked_at, null, 'the calling session is not revoked')
    for (const s of [other1, other2, expired]) {
      const row = byId.get(sidOf(s.accessToken))
      t.ok(row?.revoked_at, 'the other session is revoked')
      t.equal(row?.revoked_reason, 'password_changed')
    }
    t.equal(
      byId.get(sidOf(loggedOut.accessToken))?.revoked_reason,
      'logout',
      'a logged-out session is left as is',
    )

    const fresh = await login(app, tenant.code, user.email, NEW_PASSWORD)
    t.equal(fresh.status, 200, 'the new password logs in')
    const old = await login(app, tenant.code, user.email, PASSWORD)
    t.equal(old.status, 401, 'the old password does not')
    t.equal(old.code, 'INVALID_CREDENTIALS')

    await oneAuditRow(t, app, tenant.id, 'PASSWORD_CHANGED', {
      success: true,
      error_message: null,
      ...bySelf(user.id),
      metadata: { sessionsRevoked: 2 },
    })
  },
)

t.test('changeMyPassword: 200 with no other session revokes none (sessionsRevoked 0)', async (t) => {
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant, { roles: ['user'] })
  const mine = await loginTokens(app, user)
  const res = await changePassword(mine.accessToken, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD })
  t.equal(res.status, 200)
  t.same(res.data, { changed: true, sessionsRevoked: 0 })
  t.equal((await refresh(app, mine.refreshToken)).status, 200)
})

t.test(
  'changeMyPassword: 400 PASSWORD_POLICY_VIOLATION lists the failed rules (minLength, rejectCommon, sameAsCurrent); nothing changes',
  async (t) => {
    const { tenant, user, mine, other, before } = await userWithTwoSessions()

    const cases: [string, string[]][] = [
      ['Xq7-zz', ['minLength']],
      ['password', ['rejectCommon']],
      ['Ab1-' + 'x'.repeat(70), ['maxBytes']],
      [PASSWORD, ['sameAsCurrent']],
    ]
    for (const [newPassword, rules] of cases) {
      const res = await changePassword(mine.accessToken, { currentPassword: PASSWORD, newPassword })
      t.equal(res.status, 400, rules.join())
      t.equal(res.code, 'PASSWORD_POLICY_VIOLATION')
      t.same(res.body.details, rules)
    }
    t.equal(await hashOf(user), before, 'the hash is unchanged')
    t.equal((await refresh(app, other.refreshToken)).status, 200, 'no session was revoked')

    const rows = await auditRows(app, tenant.id, 'PASSWORD_CHANGED')
    t.equal(rows.length, cases.length, 'one failure row per call')
    for (const row of rows) {
      t.match(row, {
        success: false,
        error_message: 'PASSWORD_POLICY_VIOLATION',
        ...bySelf(user.id),
      })
    }
  },
)

t.test(
  "changeMyPassword: 400 PASSWORD_POLICY_VIOLATION under the tenant's policy (requireDigit)",
  async (t) => {
    const tenant = await createTenant(app, { passwordPolicy: { requireDigit: true } })
    const user = await createUser(app, tenant, { roles: ['user'] })
    const { accessToken } = await loginTokens(app, user)
    const res = await changePassword(accessToken, {
      currentPassword: PASSWORD,
      newPassword: 'No-digits-here-at-all',
    })
    t.equal(res.status, 400)
    t.equal(res.code, 'PASSWORD_POLICY_VIOLATION')
    t.same(res.body.details, ['requireDigit'])
    const short = await changePassword(accessToken, { currentPassword: PASSWORD, newPassword: 'Qzx-vk' })
    t.same(short.body.details, ['minLength', 'requireDigit'], 'every failed rule, in order')
    const ok = await changePassword(accessToken, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD })
    t.equal(ok.status, 200, 'a password with a digit passes')
  },
)

t.test('changeMyPassword: 400 VALIDATION_ERROR for a missing field or an unknown property', async (t) => {
  const tenant = await createTenant(app)
  const { token, ...user } = await userWithToken(app, tenant, { roles: ['user'] })
  const before = await hashOf(user)
  for (const body of [
    { currentPassword: PASSWORD },
    { newPassword: NEW_PASSWORD },
    { currentPassword: PASSWORD, newPassword: NEW_PASSWORD, extra: true },
    { currentPassword: PASSWORD, newPassword: '' },
  ]) {
    const res = await changePassword(token, unchecked(body))
    t.equal(res.status, 400, JSON.stringify(body))
    t.equal(res.code, 'VALIDATION_ERROR')
  }
  t.equal(await hashOf(user), before)
})

t.test(
  'changeMyPassword: 401 INVALID_CREDENTIALS for a wrong current password; the hash unchanged, a failure row',
  async (t) => {
    const { tenant, user, mine, other, before } = await userWithTwoSessions()

    const res = await changePassword(mine.accessToken, { currentPassword: WRONG, newPassword: NEW_PASSWORD })
    t.equal(res.status, 401)
    t.equal(res.code, 'INVALID_CREDENTIALS')
    t.equal(await hashOf(user), before, 'users.password_hash unchanged')
    t.equal((await refresh(app, other.refreshToken)).status, 200, 'no session was revoked')
    t.equal((await login(app, tenant.code, user.email, NEW_PASSWORD)).status, 401)

    await oneAuditRow(t, app, tenant.id, 'PASSWORD_CHANGED', {
      success: false,
      error_message: 'INVALID_CREDENTIALS',
      ...bySelf(user.id),
    })
  },
)

t.test(
  'changeMyPassword: 401 INVALID_CREDENTIALS for the loser of two concurrent changes from two sessions',
  async (t) => {
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant, { roles: ['user'] })
    const a = await loginTokens(app, user)
    const b = await loginTokens(app, user)
    const passwords = ['First-new-secret-31', 'Second-new-secret-32'] as const
    const [ra, rb] = await Promise.all([
      changePassword(a.accessToken, { currentPassword: PASSWORD, newPassword: passwords[0] }),
      changePassword(b.accessToken, { currentPassword: PASSWORD, newPassword: passwords[1] }),
    ])
    t.same([ra.status, rb.status].sort(), [200, 401], 'exactly one wins')
    const winner = ra.status === 200 ? 0 : 1
    const loser = winner === 0 ? rb : ra
    t.equal(loser.code, 'INVALID_CREDENTIALS', 'the password it checked is no longer the current one')
    const winnerTokens = winner === 0 ? a : b
    const loserTokens = winner === 0 ? b : a
    t.equal(
      (await login(app, tenant.code, user.email, passwords[winner])).status,
      200,
      "the winner's password",
    )
    t.equal((await refresh(app, winnerTokens.refreshToken)).status, 200, "the winner's session stays")
    t.equal(
      (await refresh(app, loserTokens.refreshToken)).code,
      'INVALID_REFRESH_TOKEN',
      "the loser's is revoked",
    )
    const rows = await auditRows(app, tenant.id, 'PASSWORD_CHANGED')
    t.same(rows.map((r) => r.success).sort(), [false, true], 'one success row, one failure row')
  },
)

t.test('changeMyPassword: 403 USER_INACTIVE for a SUSPENDED user holding a still-valid token', async (t) => {
  const tenant = await createTenant(app)
  const { token, ...user } = await userWithToken(app, tenant, { roles: ['user'], status: 'SUSPENDED' })
  const before = await hashOf(user)
  const res = await changePassword(token, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD })
  t.equal(res.status, 403)
  t.equal(res.code, 'USER_INACTIVE')
  t.equal(await hashOf(user), before)
  await oneAuditRow(t, app, tenant.id, 'PASSWORD_CHANGED', {
    success: false,
    error_message: 'USER_INACTIVE',
    ...bySelf(user.id),
  })
})

t.test(
  'changeMyPassword: 404 USER_NOT_FOUND after the user was deleted, its token still valid',
  async (t) => {
    const tenant = await createTenant(app)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const { token, ...user } = await userWithToken(app, tenant, { roles: ['user'] })
    const del = await call(app, 'deleteUser', { token: admin.token }, { params: { userId: user.id } })
    t.equal(del.status, 200)
    const res = await changePassword(token, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD })
    t.equal(res.status, 404)
    t.equal(res.code, 'USER_NOT_FOUND')
    await oneAuditRow(t, app, tenant.id, 'PASSWORD_CHANGED', {
      success: false,
      error_message: 'USER_NOT_FOUND',
      ...byUser(user.id),
    })
  },
)

t.test(
  'changeMyPassword: 429 RATE_LIMIT_EXCEEDED on the 6th call from one address (the 5/min login budget); no audit row',
  async (t) => {
    const tenant = await createTenant(app)
    const { token, ...user } = await userWithToken(app, tenant, { roles: ['user'] })
    const ip = freshIp()
    for (let i = 1; i <= 5; i++) {
      const res = await changePassword(token, { currentPassword: WRONG, newPassword: NEW_PASSWORD }, ip)
      t.equal(res.status, 401, `call ${i} is answered`)
      t.equal(res.code, 'INVALID_CREDENTIALS')
    }
    const sixth = await changePassword(token, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }, ip)
    t.equal(sixth.status, 429)
    t.equal(sixth.code, 'RATE_LIMIT_EXCEEDED')
    t.ok(Number(sixth.headers['retry-after']) >= 1, 'Retry-After is set')
    const elsewhere = await changePassword(token, { currentPassword: WRONG, newPassword: NEW_PASSWORD })
    t.equal(elsewhere.status, 401, 'another address has its own budget')
    t.equal((await auditRows(app, tenant.id, 'PASSWORD_CHANGED')).length, 6, 'none for the 429')
    t.equal(
      (await login(app, tenant.code, user.email, PASSWORD, ip)).status,
      429,
      'login from that address too',
    )
  },
)

t.test(
  'changeMyPassword: 429 RATE_LIMIT_EXCEEDED once logins and password changes spent the shared budget',
  async (t) => {
    const tenant = await createTenant(app)
    const { token, ...user } = await userWithToken(app, tenant, { roles: ['user'] })
    const ip = freshIp()
    for (let i = 1; i <= 3; i++) {
      t.equal((await login(app, tenant.code, user.email, PASSWORD, ip)).status, 200, `login ${i}`)
    }
    const first = await changePassword(token, { currentPassword: PASSWORD, newPassword: 'Qzx-vk' }, ip)
    t.equal(first.code, 'PASSWORD_POLICY_VIOLATION')
    const second = await changePassword(token, { currentPassword: WRONG, newPassword: NEW_PASSWORD }, ip)
    t.equal(second.code, 'INVALID_CREDENTIALS')
    const third = await changePassword(token, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }, ip)
    t.equal(third.status, 429, 'the 6th request of the login bucket')
    t.equal(third.code, 'RATE_LIMIT_EXCEEDED')
    const before = await hashOf(user)
    t.equal((await login(app, tenant.code, user.email, PASSWORD)).status, 200, 'the password was not changed')
    t.equal(await hashOf(user), before)
  },
)

// ---------------------------------------------------------------------------------------------------
// resetUserPassword
// ---------------------------------------------------------------------------------------------------

t.test(
  'resetUserPassword: 200 revokes every session by default and counts them; the new password logs in',
  async (t) => {
    const tenant = await createTenant(app)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const target = await createUser(app, tenant, { roles: ['user'] })
    const s1 = await loginTokens(app, target)
    const s2 = await loginTokens(app, target)
    const before = await hashOf(target)

    const res = await resetPassword({ token: admin.token }, target.id, { password: NEW_PASSWORD })
    t.equal(res.status, 200)
    t.same(res.data, { changed: true, sessionsRevoked: 2 })
    t.not(await hashOf(target), before, 'users.password_hash changed')
    for (const s of [s1, s2]) {
      const r = await refresh(app, s.refreshToken)
      t.equal(r.status, 401)
      t.equal(r.code, 'INVALID_REFRESH_TOKEN')
    }
    const sessions = await sessionsOf(app, target)
    t.equal(sessions.length, 2)
    t.ok(
      sessions.every((s) => s.revoked_at !== null),
      'every session row is revoked',
    )
    t.equal(
      (await login(app, tenant.code, target.email, NEW_PASSWORD)).status,
      200,
      'the new password logs in',
    )
    const old = await login(app, tenant.code, target.email, PASSWORD)
    t.equal(old.status, 401, 'the old one does not')
    t.equal(old.code, 'INVALID_CREDENTIALS')

    await oneAuditRow(t, app, tenant.id, 'PASSWORD_RESET', {
      success: true,
      error_message: null,
      ...byUser(admin.id),
      user_id: target.id,
      metadata: { sessionsRevoked: 2 },
    })
  },
)

t.test(
  'resetUserPassword: 200 with revokeSessions false: the sessions survive, sessionsRevoked 0',
  async (t) => {
    const tenant = await createTenant(app)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const target = await createUser(app, tenant, { roles: ['user'] })
    const s1 = await loginTokens(app, target)
    const res = await resetPassword({ token: admin.token }, target.id, {
      password: NEW_PASSWORD,
      revokeSessions: false,
    })
    t.equal(res.status, 200)
    t.same(res.data, { changed: true, sessionsRevoked: 0 })
    t.same(
      (await sessionsOf(app, target)).map((s) => s.revoked_at),
      [null],
      'the session row is not revoked',
    )
    t.equal((await refresh(app, s1.refreshToken)).status, 200, 'its refresh token still refreshes')
    t.equal(
      (await login(app, tenant.code, target.email, NEW_PASSWORD)).status,
      200,
      'the new password logs in',
    )
    const rows = await auditRows(app, tenant.id, 'PASSWORD_RESET')
    t.match(rows, [{ success: true, user_id: target.id, metadata: { sessionsRevoked: 0 } }])
  },
)

t.test(
  "resetUserPassword: 200 with a Client Key holding users:update; the row's actor is the key",
  async (t) => {
    const tenant = await createTenant(app)
    const key = await createKey(app, tenant, ['users:update'])
    const target = await createUser(app, tenant, { roles: ['user'] })
    const s1 = await loginTokens(app, target)
    const res = await resetPassword({ key: key.value }, target.id, { password: NEW_PASSWORD })
    t.equal(res.status, 200)
    t.same(res.data, { changed: true, sessionsRevoked: 1 })
    t.equal((await refresh(app, s1.refreshToken)).code, 'INVALID_REFRESH_TOKEN')
    t.equal((await login(app, tenant.code, target.email, NEW_PASSWORD)).status, 200)
    await oneAuditRow(t, app, tenant.id, 'PASSWORD_RESET', {
      success: true,
      ...byKey(key.id),
      user_id: target.id,
    })
  },
)

t.test(
  'resetUserPassword: 400 PASSWORD_POLICY_VIOLATION lists the failed rules, never sameAsCurrent',
  async (t) => {
    const tenant = await createTenant(app, { passwordPolicy: { requireDigit: true } })
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const target = await createUser(app, tenant, { roles: ['user'] })
    const s1 = await loginTokens(app, target)
    const before = await hashOf(target)
    // Why no sameAsCurrent case: contract section 22 dropped it from resets (the oracle test below).
    const cases: [string, string[]][] = [
      ['Qzx-vk', ['minLength', 'requireDigit']],
      ['No-digits-here-at-all', ['requireDigit']],
      ['Ab1-' + 'x'.repeat(70), ['maxBytes']],
    ]
    for (const [password, rules] of cases) {
      const res = await resetPassword({ token: admin.token }, target.id, { password })
      t.equal(res.status, 400, rules.join())
      t.equal(res.code, 'PASSWORD_POLICY_VIOLATION')
      t.same(res.body.details, rules)
    }
    t.equal(await hashOf(target), before, 'the hash is unchanged')
    t.equal((await refresh(app, s1.refreshToken)).status, 200, 'no session was revoked')
    const rows = await auditRows(app, tenant.id, 'PASSWORD_RESET')
    t.equal(rows.length, cases.length)
    for (const row of rows) {
      t.match(row, {
        success: false,
        error_message: 'PASSWORD_POLICY_VIOLATION',
        ...byUser(admin.id),
        user_id: target.id,
      })
    }
  },
)

t.test(
  'resetUserPassword: 400 VALIDATION_ERROR for a missing password or a userId that is not a UUID',
  async (t) => {
    const tenant = await createTenant(app)
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const target = await createUser(app, tenant, { roles: ['user'] })
    const missing = await resetPassword(
      { token: admin.token },
      target.id,
      unchecked({ revokeSessions: true }),
    )
    t.equal(missing.status, 400)
    t.equal(missing.code, 'VALIDATION_ERROR')
    const badType = await resetPassword(
      { token: admin.token },
      target.id,
      unchecked({ password: NEW_PASSWORD, revokeSessions: 'no' }),
    )
    t.equal(badType.code, 'VALIDATION_ERROR')
    const badId = await resetPassword({ token: admin.token }, 'not-a-uuid', { password: NEW_PASSWORD })
    t.equal(badId.status, 400)
    t.equal(badId.code, 'VALIDATION_ERROR')
  },
)

t.test(
  'resetUserPassword: 403 ROLE_HIERARCHY_VIOLATION for a user of the same or a higher rank, before the policy',
  async (t) => {
    const tenant = await createTenant(app)
    await insertRole(app, tenant, 'manager', 50, ['users:update'])
    const admin = await userWithToken(app, tenant, { roles: ['admin'] })
    const peer = await createUser(app, tenant, { roles: ['admin'] })
    const manager = await userWithToken(app, tenant, { roles: ['manager'] })
    const otherManager = await createUser(app, tenant, { roles: ['manager'] })
    const plain = await createUser(app, tenant, { roles: ['user'] })
    const peerHash = await hashOf(peer)

    const attempts: [string, string, UserFx, string][] = [
      ['admin on admin (same level)', admin.token, peer, NEW_PASSWORD],
      ['admin on admin, a password the policy refuses', admin.token, peer, 'Qzx-vk'],
      ['manager (50) on admin (100)', manager.token, peer, NEW_PASSWORD],
      ['manager on manager (same level)', manager.token, otherManager, NEW_PASSWORD],
    ]
    for (const [what, token, target, password] of attempts) {
      const res = await resetPassword({ token }, target.id, { password })
      t.equal(res.status, 403, what)
      t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION', what)
    }
    t.equal(await hashOf(peer), peerHash, 'the hash is unchanged')

    const below = await resetPassword({ token: manager.token }, plain.id, { password: NEW_PASSWORD })
    t.equal(below.status, 200, 'a manager may reset a user strictly below it')

    const rows = await auditRows(app, tenant.id, 'PASSWORD_RESET')
    t.equal(rows.length, attempts.length + 1)
    t.match(
      rows.slice(0, attempts.length),
      [
        [admin.id, peer.id],
        [admin.id, peer.id],
        [manager.id, peer.id],
        [manager.id, otherManager.id],
      ].map(([actor_id, user_id]) => ({
        success: false,
        error_message: 'ROLE_HIERARCHY_VIOLATION',
        actor_id,
        user_id,
      })),
    )
    t.match(rows[attempts.length], { success: true, actor_type: 'user', user_id: plain.id })
  },
)

t.test(
  "resetUserPassword: 403 ROLE_HIERARCHY_VIOLATION for a Client Key whose scopes do not contain the target's permissions",
  async (t) => {
    const tenant = await createTenant(app)
    const key = await createKey(app, tenant, ['users:update'])
    const admin = await createUser(app, tenant, { roles: ['admin'] })
    const reader = await createUser(app, tenant, { roles: ['user'], permissions: ['roles:read'] })
    for (const target of [admin, reader]) {
      const before = await hashOf(target)
      const res = await resetPassword({ key: key.value }, target.id, { password: NEW_PASSWORD })
      t.equal(res.status, 403)
      t.equal(res.code, 'ROLE_HIERARCHY_VIOLATION')
      t.equal(await hashOf(target), before)
    }
    const wider = await keyCred(app, tenant, ['users:update', 'roles:read'])
    const ok = await resetPassword(wider, reader.id, { password: NEW_PASSWORD })
    t.equal(ok.status, 200, 'a key whose scopes contain them may')
    const rows = await auditRows(app, tenant.id, 'PASSWORD_RESET')
    t.match(rows.slice(0, 2), [
      {
        success: false,
        error_message: 'ROLE_HIERARCHY_VIOLATION',
        ...byKey(key.id),
      },
      {
        success: false,
        error_message: 'ROLE_HIERARCHY_VIOLATION',
        ...byKey(key.id),
      },
    ])
  },
)

t.test(
  'resetUserPassword: 403 FORBIDDEN without users:update (a user token, a key); no audit row',
  async (t) => {
    const tenant = await createTenant(app)
    const plain = await userWithToken(app, tenant, { roles: ['user'], permissions: ['users:read'] })
    const target = await createUser(app, tenant)
    const before = await hashOf(target)
    for (const as of [{ token: plain.token }, await keyCred(app, tenant, ['users:read'])]) {
      const res = await resetPassword(as, target.id, { password: NEW_PASSWORD })
      t.equal(res.status, 403)
      t.equal(res.code, 'FORBIDDEN')
    }
    t.equal(await hashOf(target), before)
    t.same(await auditRows(app, tenant.id, 'PASSWORD_RESET'), [], 'the gate refused before the handler')
  },
)

t.test("resetUserPassword: 404 USER_NOT_FOUND for an unknown id and for another tenant's user", async (t) => {
  const tenant = await createTenant(app)
  const other = await createTenant(app)
  const admin = await userWithToken(app, tenant, { roles: ['admin'] })
  const key = await keyCred(app, tenant, ['users:update'])
  const foreign = await createUser(app, other, { roles: ['user'] })
  const foreignSession = await loginTokens(app, foreign)
  const foreignHash = await hashOf(foreign)

  for (const [as, id] of [
    [{ token: admin.token }, UNKNOWN_ID],
    [{ token: admin.token }, foreign.id],
    [key, foreign.id],
  ] as const) {
    const res = await resetPassword(as, id, { password: NEW_PASSWORD })
    t.equal(res.status, 404)
    t.equal(res.code, 'USER_NOT_FOUND')
  }
  t.equal(await hashOf(foreign), foreignHash, "the other tenant's user is untouched")
  t.equal((await refresh(app, foreignSession.refreshToken)).status, 200, 'and its session too')
  t.same(await auditRows(app, other.id, 'PASSWORD_RESET'), [], "no row in the other tenant's log")
  const rows = await auditRows(app, tenant.id, 'PASSWORD_RESET')
  t.equal(rows.length, 3)
  t.ok(
    rows.every((r) => !r.success && r.error_message === 'USER_NOT_FOUND' && r.user_id === null),
    'failure rows that name no user',
  )
  t.match(rows[0], { actor_type: 'user', actor_id: admin.id })
  t.match(rows[2], { actor_type: 'client_key' })
})

t.test(
  'resetUserPassword: 403 FORBIDDEN for a user naming itself; its own password is changed at /me/password',
  async (t) => {
    const app = await buildTestApp(t)
    const tenant = await createTenant(app)
    const admin = await createUser(app, tenant, { roles: ['admin'] })
    const { accessToken } = await loginTokens(app, admin)
    const r = await call(
      app,
      'resetUserPassword',
      { token: accessToken },
      {
        params: { userId: admin.id },
        body: {
          password: 'Another-pass-12345',
        },
      },
    )
    t.equal(r.status, 403)
    t.equal(r.code, 'FORBIDDEN')
    t.equal((await login(app, tenant.code, admin.email)).status, 200, 'the password is unchanged')
  },
)

t.test(
  'resetUserPassword: no password oracle: a wrong and the right guess get the same answer, and the current password may be set again',
  async (t) => {
    // Why minLength 72: every guess fails the policy, so before section 22 only `sameAsCurrent` told the
    // right guess (the user's password) from a wrong one.
    const strict = await createTenant(app, { passwordPolicy: { minLength: 72 } })
    const admin = await userWithToken(app, strict, { roles: ['admin'] })
    const target = await createUser(app, strict, { roles: ['user'] })
    const wrong = await resetPassword({ token: admin.token }, target.id, { password: WRONG })
    const right = await resetPassword({ token: admin.token }, target.id, { password: PASSWORD })
    t.equal(wrong.status, 400)
    t.equal(right.status, 400)
    t.same(right.body.details, ['minLength'])
    t.same(right.body, wrong.body, 'the same envelope for both')

    const tenant = await createTenant(app)
    const admin2 = await userWithToken(app, tenant, { roles: ['admin'] })
    const user = await createUser(app, tenant, { roles: ['user'] })
    const before = await hashOf(user)
    const again = await resetPassword({ token: admin2.token }, user.id, { password: PASSWORD })
    t.equal(again.status, 200, 'the current password, meeting the policy, is set again')
    t.same(again.data, { changed: true, sessionsRevoked: 0 })
    t.not(await hashOf(user), before, 'a new hash (a new salt) of the same password')
    t.equal((await login(app, tenant.code, user.email)).status, 200, 'which still logs in')
  },
)
