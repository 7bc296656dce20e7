// The document bounds every input (issue 19): a string past its maxLength, a list past its maxItems and a
// number outside its range are each 400 VALIDATION_ERROR naming the field, on a representative operation of
// every module; an operation answers 400 to a query parameter it does not take. The contract guard checks
// every answer here against the document, so the error bodies keep to its bounds too.
import t, { type Test } from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call, detailPaths, login, refresh, unchecked, type AnyRes, type As } from '../helpers/call.js'
import {
  createTenant,
  createUser,
  PASSWORD,
  platformKey,
  UNKNOWN_ID,
  userWithToken,
} from '../helpers/fixtures.js'

const app = await buildTestApp(t)
const tenant = await createTenant(app, { loginIdentifiers: ['email', 'username'] })
const admin = await userWithToken(app, tenant, { roles: ['admin'] })
const adminCred: As = admin.cred

/** A 400 VALIDATION_ERROR whose details name `path`. */
function rejects(t: Test, res: AnyRes, path: string): void {
  t.equal(res.status, 400)
  t.equal(res.code, 'VALIDATION_ERROR')
  const paths = detailPaths(res)
  t.ok(paths.includes(path), `details name ${path} (${paths.join(', ')})`)
}

const distinct = (n: number, make: (i: number) => string) => Array.from({ length: n }, (_, i) => make(i))

// Over-long strings.

t.test('login: 400 for an identifier over 254 characters', async (t) => {
  const res = await login(app, tenant.code, `${'a'.repeat(250)}@x.test`)
  rejects(t, res, 'body.identifier')
})

t.test('refresh: 400 for a refresh token over 1024 characters; any shorter string is 401', async (t) => {
  const res = await refresh(app, 'A'.repeat(1025))
  rejects(t, res, 'body.refreshToken')
  for (const refreshToken of ['A'.repeat(1024), 'invalid.token.here', 'not a token!', '', 'tökén']) {
    const at = await refresh(app, refreshToken)
    t.equal(at.status, 401, `${JSON.stringify(refreshToken.slice(0, 20))} is an unknown token, as before`)
    t.equal(at.code, 'INVALID_REFRESH_TOKEN')
  }
})

t.test('updateUser: 400 for a username over 64 characters', async (t) => {
  const target = await createUser(app, tenant)
  const res = await call(app, 'updateUser', adminCred, {
    params: { userId: target.id },
    body: { username: 'u'.repeat(65) },
  })
  rejects(t, res, 'body.username')
})

t.test('createRole: 400 for a name over 64 characters', async (t) => {
  rejects(t, await call(app, 'createRole', adminCred, { body: { name: 'r'.repeat(65) } }), 'body.name')
  const at = await call(app, 'createRole', adminCred, { body: { name: 'r'.repeat(64) } })
  t.equal(at.status, 201, 'a name of exactly 64 characters is created')
})

t.test('createPermission: 400 for a description over 500 characters', async (t) => {
  const res = await call(app, 'createPermission', adminCred, {
    body: {
      name: 'boats:row',
      description: 'd'.repeat(501),
    },
  })
  rejects(t, res, 'body.description')
})

t.test('createTenant: 400 for a name over 100 characters', async (t) => {
  const res = await call(app, 'createTenant', platformKey, {
    body: {
      code: 'bounded',
      name: 'n'.repeat(101),
    },
  })
  rejects(t, res, 'body.name')
})

t.test('createClientKey: 400 for a name over 100 characters', async (t) => {
  const res = await call(app, 'createClientKey', adminCred, {
    body: {
      name: 'k'.repeat(101),
      scopes: ['users:read'],
    },
  })
  rejects(t, res, 'body.name')
})

t.test(
  'register: the password bound is 1024 characters; the 72-byte rule stays the policy check',
  async (t) => {
    const over = await call(app, 'register', adminCred, {
      body: {
        email: 'long@example.test',
        password: 'p'.repeat(1025),
      },
    })
    rejects(t, over, 'body.password')
    const policy = await call(app, 'register', adminCred, {
      body: {
        email: 'long@example.test',
        password: 'Pw1-'.repeat(250),
      },
    })
    t.equal(policy.status, 400, '1000 characters reach the policy')
    t.equal(policy.code, 'PASSWORD_POLICY_VIOLATION')
    t.ok((policy.body.details as string[]).includes('maxBytes'))
  },
)

t.test('login: a password within 1024 characters but over 72 bytes is INVALID_CREDENTIALS', async (t) => {
  const res = await login(app, tenant.code, admin.email, PASSWORD + 'x'.repeat(1000 - PASSWORD.length))
  t.equal(res.status, 401)
  t.equal(res.code, 'INVALID_CREDENTIALS')
})

// Too many items.

t.test('register: 400 for more than 100 roles', async (t) => {
  const res = await call(app, 'register', adminCred, {
    body: {
      email: 'many@example.test',
      password: PASSWORD,
      roles: distinct(101, (i) => `role-${i}`),
    },
  })
  rejects(t, res, 'body.roles')
})

t.test('addRolePermissions: 400 for more than 500 permissions', async (t) => {
  const res = await call(app, 'addRolePermissions', adminCred, {
    params: { id: UNKNOWN_ID },
    body: {
      permissions: distinct(501, (i) => `r${i}:read`),
    },
  })
  rejects(t, res, 'body.permissions')
})

t.test('checkPermission: 400 for more than 100 permissions', async (t) => {
  const res = await call(app, 'checkPermission', adminCred, {
    body: {
      permissions: distinct(101, (i) => `r${i}:read`),
      mode: 'all',
    },
  })
  rejects(t, res, 'body.permissions')
})

t.test('createTenant: 400 for more than 3 login identifier kinds', async (t) => {
  const res = await call(app, 'createTenant', platformKey, {
    body: {
      code: 'bounded-kinds',
      name: 'Bounded',
      auth_config: { loginIdentifiers: ['email', 'username', 'cpf_cnpj', 'email'] },
    },
  })
  rejects(t, res, 'body.auth_config.loginIdentifiers')
})

t.test('createClientKey: 400 for more than 100 IP ranges', async (t) => {
  const res = await call(app, 'createClientKey', adminCred, {
    body: {
      name: 'wide',
      scopes: ['users:read'],
      ipAllowlist: distinct(101, (i) => `10.0.${i}.0/24`),
    },
  })
  rejects(t, res, 'body.ipAllowlist')
})

// Integers out of range.

t.test('listAuthLogs: 400 for a limit over 500', async (t) => {
  rejects(t, await call(app, 'listAuthLogs', adminCred, { query: { limit: 501 } }), 'query.limit')
})

t.test('listUsers: 400 for an offset over 2147483647', async (t) => {
  rejects(t, await call(app, 'listUsers', adminCred, { query: { offset: 2147483648 } }), 'query.offset')
})

t.test('createRole: 400 for a level over 1000', async (t) => {
  rejects(t, await call(app, 'createRole', adminCred, { body: { name: 'lofty', level: 1001 } }), 'body.level')
})

t.test('listPermissions: 400 for a limit over 100', async (t) => {
  rejects(t, await call(app, 'listPermissions', adminCred, { query: { limit: 101 } }), 'query.limit')
})

t.test('updateTenantConfig: 400 for a requestsPerMinute over 1000000', async (t) => {
  const res = await call(app, 'updateTenantConfig', platformKey, {
    params: { id: tenant.id },
    body: {
      rateLimits: { requestsPerMinute: 1_000_001 },
    },
  })
  rejects(t, res, 'body.rateLimits.requestsPerMinute')
})

t.test('rotateClientKey: 400 for a grace period over 604800 seconds', async (t) => {
  const res = await call(app, 'rotateClientKey', adminCred, {
    params: { id: UNKNOWN_ID },
    body: {
      gracePeriodSeconds: 604_801,
    },
  })
  rejects(t, res, 'body.gracePeriodSeconds')
})

// Query parameters an operation does not take.

type NoQueryOp =
  | 'getMe'
  | 'getMyTenant'
  | 'getMyTenantConfig'
  | 'getJwtSecret'
  | 'getTenantMetrics'
  | 'getSecurityMetrics'
  | 'listClientKeyScopes'
  | 'getHealth'
  | 'getHealthRoot'
const noQuery: [NoQueryOp, As][] = [
  ['getMe', adminCred],
  ['getMyTenant', adminCred],
  ['getMyTenantConfig', adminCred],
  ['getJwtSecret', adminCred],
  ['getTenantMetrics', adminCred],
  ['getSecurityMetrics', adminCred],
  ['listClientKeyScopes', adminCred],
  ['getHealth', {}],
  ['getHealthRoot', {}],
]
for (const [op, as] of noQuery) {
  t.test(`${op}: 400 for a query parameter it does not take`, async (t) => {
    rejects(t, await call(app, op, as, { query: unchecked({ debug: 1 }) }), 'query.debug')
    t.equal((await call(app, op, as)).status, 200, 'without it, 200')
  })
}
