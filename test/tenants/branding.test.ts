import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call, detailPaths, unchecked } from '../helpers/call.js'
import { auditRows, createTenant, deactivateTenant, platformKey, userWithToken } from '../helpers/fixtures.js'
import { oneAuditRow, byUser } from '../helpers/audit.js'

// Issue 44: a tenant's branding (display name, logo, colour) in its auth_config, set through
// PATCH /tenants/{id}/config, and read by the sign-in page through GET /login/branding.

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
const JPEG_MAGIC = [0xff, 0xd8, 0xff, 0xe0]
const WEBP_MAGIC = [...Buffer.from('RIFF'), 0, 0, 0, 0, ...Buffer.from('WEBP')]

/** A data URL of `size` bytes that start with `magic` (enough for the service's check of the type). */
function dataUrl(type: string, magic: number[], size = 64): string {
  const bytes = Buffer.alloc(size, 7)
  Buffer.from(magic).copy(bytes)
  return `data:${type};base64,${bytes.toString('base64')}`
}

const PNG = dataUrl('image/png', PNG_MAGIC)
const NULLS = { displayName: null, logo: null, color: null }

t.test('updateTenantConfig: branding', async (t) => {
  const app = await buildTestApp(t)

  await t.test('200 sets, merges key by key, clears a key and drops it all; audited by name', async (t) => {
    const tenant = await createTenant(app)
    const { id: userId, cred } = await userWithToken(app, tenant, { roles: ['admin'] })
    const patch = (branding: unknown) =>
      call(app, 'updateTenantConfig', cred, { params: { id: tenant.id }, body: unchecked({ branding }) })

    const set = await patch({ displayName: 'Acme Corp', logo: PNG, color: '#0B5CAD' })
    t.equal(set.status, 200)
    t.same(set.data.branding, { displayName: 'Acme Corp', logo: PNG, color: '#0B5CAD' })

    const merged = await patch({ color: '#ffcc00' })
    t.same(merged.data.branding, { displayName: 'Acme Corp', logo: PNG, color: '#ffcc00' })
    const cleared = await patch({ logo: null })
    t.same(cleared.data.branding, { displayName: 'Acme Corp', logo: null, color: '#ffcc00' })
    const config = await call(app, 'getMyTenantConfig', cred)
    t.same(config.data.branding, cleared.data.branding)

    const partial = await createTenant(app)
    const other = await userWithToken(app, partial, { roles: ['admin'] })
    const first = await call(app, 'updateTenantConfig', other.cred, {
      params: { id: partial.id },
      body: { branding: { displayName: 'Only a name' } },
    })
    t.same(first.data.branding, { ...NULLS, displayName: 'Only a name' }, 'every key set, unset ones null')

    t.same((await patch(null)).data.branding, null)
    const rows = await auditRows(app, tenant.id, 'TENANT_CONFIG_UPDATE')
    t.equal(rows.length, 4)
    for (const row of rows) {
      t.match(row, { ...byUser(userId), success: true, metadata: { changed: ['branding'] } })
      t.notMatch(JSON.stringify(row), /base64|Acme/, 'no value in the row')
    }
  })

  await t.test('200 for each image type; a logo of exactly 45 KiB is taken', async (t) => {
    const tenant = await createTenant(app)
    const { cred } = await userWithToken(app, tenant, { roles: ['admin'] })
    const logos = [
      dataUrl('image/jpeg', JPEG_MAGIC),
      dataUrl('image/webp', WEBP_MAGIC),
      dataUrl('image/png', PNG_MAGIC, 45 * 1024),
    ]
    for (const logo of logos) {
      const res = await call(app, 'updateTenantConfig', cred, {
        params: { id: tenant.id },
        body: { branding: { logo } },
      })
      t.equal(res.status, 200, logo.slice(0, 20))
      t.equal(res.data.branding?.logo, logo)
    }
  })

  await t.test('400 VALIDATION_ERROR naming the field, for each bad input; nothing stored', async (t) => {
    const tenant = await createTenant(app)
    const { id: userId, cred } = await userWithToken(app, tenant, { roles: ['admin'] })
    const svg = `data:image/svg+xml;base64,${Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64')}`
    const bad: [string, unknown][] = [
      ['a name over 64 characters', { displayName: 'x'.repeat(65) }],
      ['an empty name', { displayName: '' }],
      ['a name with a control character', { displayName: 'Acme\u0007' }],
      ['a name with a C1 control character', { displayName: 'Acme\u0085' }],
      ['a name with a bidi override', { displayName: 'Acme\u202Egnp.exe' }],
      ['a name with a zero-width space', { displayName: 'Ac\u200Bme' }],
      ['a name with a line separator', { displayName: 'Acme\u2028Inc' }],
      ['a name of spaces only', { displayName: '   ' }],
      ['an SVG logo', { logo: svg }],
      ['a remote logo', { logo: 'https://cdn.example.com/logo.png' }],
      ['a logo not in base64', { logo: 'data:image/png,rawbytes' }],
      ['a logo whose base64 is broken', { logo: `${PNG.slice(0, -2)}` }],
      ['a logo with characters outside base64', { logo: `${PNG.slice(0, 30)}*${PNG.slice(31)}` }],
      ['a logo over 45 KiB', { logo: dataUrl('image/png', PNG_MAGIC, 45 * 1024 + 3) }],
      ['a logo whose bytes are not its type', { logo: dataUrl('image/png', JPEG_MAGIC) }],
      ['a JPEG that is text', { logo: `data:image/jpeg;base64,${Buffer.from('hello').toString('base64')}=` }],
      ['a colour of three digits', { color: '#fff' }],
      ['a colour by name', { color: 'red' }],
      ['an unknown property', { font: 'Comic Sans' }],
    ]
    for (const [what, branding] of bad) {
      const res = await call(app, 'updateTenantConfig', cred, {
        params: { id: tenant.id },
        body: unchecked({ branding }),
      })
      t.equal(res.status, 400, what)
      t.equal(res.code, 'VALIDATION_ERROR', what)
      t.ok(
        detailPaths(res).some((p) => p.startsWith('body.branding')),
        `${what}: the detail names body.branding`,
      )
    }
    const config = await call(app, 'getMyTenantConfig', cred)
    t.equal(config.data.branding, null, 'nothing stored')
    const rows = await auditRows(app, tenant.id, 'TENANT_CONFIG_UPDATE')
    t.equal(rows.length, bad.length, 'every refusal audited')
    t.match(rows[0], { ...byUser(userId), success: false, error_message: 'VALIDATION_ERROR' })
  })

  await t.test('createTenant: a branding in auth_config is checked the same way', async (t) => {
    const res = await call(app, 'createTenant', platformKey, {
      body: unchecked({
        code: `b-${Date.now().toString(36)}`,
        name: 'Branded',
        auth_config: { branding: { logo: dataUrl('image/webp', PNG_MAGIC) } },
      }),
    })
    t.equal(res.status, 400)
    t.same(detailPaths(res), ['body.auth_config.branding.logo'])
  })

  await t.test('413 PAYLOAD_TOO_LARGE above 64 KiB, as everywhere', async (t) => {
    const tenant = await createTenant(app)
    const { cred } = await userWithToken(app, tenant, { roles: ['admin'] })
    const huge = dataUrl('image/png', PNG_MAGIC, 60 * 1024)
    const res = await call(app, 'updateTenantConfig', cred, {
      params: { id: tenant.id },
      body: unchecked({ branding: { logo: huge } }),
    })
    t.equal(res.status, 413)
    t.equal(res.code, 'PAYLOAD_TOO_LARGE')
    const name = await call(app, 'updateTenant', cred, {
      params: { id: tenant.id },
      body: unchecked({ name: 'x'.repeat(70 * 1024) }),
    })
    t.equal(name.status, 413)
  })

  await t.test('403 FORBIDDEN without tenants:update; audited', async (t) => {
    const tenant = await createTenant(app)
    const { id: userId, cred } = await userWithToken(app, tenant, { roles: ['user'] })
    const res = await call(app, 'updateTenantConfig', cred, {
      params: { id: tenant.id },
      body: { branding: { displayName: 'Mine now' } },
    })
    t.equal(res.status, 403)
    await oneAuditRow(t, app, tenant.id, 'TENANT_CONFIG_UPDATE', { ...byUser(userId), success: false })
  })
})

t.test('getLoginBranding: GET /login/branding', async (t) => {
  const app = await buildTestApp(t)
  const branded = await createTenant(app, {
    branding: { displayName: 'Acme', logo: PNG, color: '#112233' },
  })

  await t.test('200 the branding, by a code in any case; no-store', async (t) => {
    const res = await call(app, 'getLoginBranding', null, {
      query: { tenantCode: branded.code.toUpperCase() },
    })
    t.equal(res.status, 200)
    t.same(res.data, { displayName: 'Acme', logo: PNG, color: '#112233' })
    t.equal(res.headers['cache-control'], 'no-store')
  })

  await t.test('200 nulls alike for no branding, an unknown and an inactive tenant', async (t) => {
    const plain = await createTenant(app)
    const inactive = await createTenant(app, { branding: { displayName: 'Gone', logo: null, color: null } })
    await deactivateTenant(app, inactive.id)
    for (const tenantCode of [plain.code, 'no-such-tenant', inactive.code]) {
      const res = await call(app, 'getLoginBranding', null, { query: { tenantCode } })
      t.equal(res.status, 200, tenantCode)
      t.same(res.data, NULLS, tenantCode)
    }
  })

  await t.test('200 shows a change at once on the instance that made it', async (t) => {
    const tenant = await createTenant(app)
    const { cred } = await userWithToken(app, tenant, { roles: ['admin'] })
    const ask = () => call(app, 'getLoginBranding', null, { query: { tenantCode: tenant.code } })
    t.same((await ask()).data, NULLS)
    await call(app, 'updateTenantConfig', cred, {
      params: { id: tenant.id },
      body: { branding: { color: '#abcdef' } },
    })
    t.same((await ask()).data, { ...NULLS, color: '#abcdef' })
  })

  await t.test('400 VALIDATION_ERROR for a missing, malformed or extra parameter', async (t) => {
    const queries = [
      {},
      { tenantCode: 'bad code!' },
      { tenantCode: 'x'.repeat(65) },
      { tenantCode: 'a', x: '1' },
    ]
    for (const query of queries) {
      const res = await call(app, 'getLoginBranding', null, unchecked({ query }))
      t.equal(res.status, 400, JSON.stringify(query))
      t.equal(res.code, 'VALIDATION_ERROR')
    }
  })

  await t.test(
    '429 RATE_LIMIT_EXCEEDED once the per-IP budget is spent, as for /login/providers',
    async (t) => {
      const ip = '203.0.113.44'
      let last = await call(app, 'getLoginBranding', { ip }, { query: { tenantCode: branded.code } })
      for (let i = 0; i < 100 && last.status !== 429; i++) {
        last = await call(app, 'getLoginBranding', { ip }, { query: { tenantCode: branded.code } })
      }
      t.equal(last.status, 429)
      t.equal(last.code, 'RATE_LIMIT_EXCEEDED')
      t.ok(last.headers['retry-after'])
    },
  )
})
