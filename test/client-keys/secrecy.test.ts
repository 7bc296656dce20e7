import { sql } from 'kysely'
import t from 'tap'
import { buildLoggedTestApp, PLATFORM_KEY } from '../helpers/app.js'
import { createTenant, createUser, tokenFor } from '../helpers/fixtures.js'
import { call, type AnyRes } from '../helpers/call.js'

// createClientKey and rotateClientKey (openapi/paths/client-keys.yaml): the value is shown once (create,
// and rotate for the new value), never again, in no response, log line or stored row.
t.test(
  'createClientKey, rotateClientKey: a key value appears in its create or rotate response only',
  async (t) => {
    const { app, lines } = await buildLoggedTestApp(t)
    const tenant = await createTenant(app)
    const admin = await createUser(app, tenant, { roles: ['admin'] })
    const jwt = await tokenFor(app, admin)

    const created = await call(
      app,
      'createClientKey',
      { token: jwt },
      { body: { name: 'secret', scopes: ['client-keys:read', 'client-keys:update'] } },
    )
    t.equal(created.status, 201)
    const { id, key: first } = created.body.data as { id: string; key: string }
    const rotated = await call(
      app,
      'rotateClientKey',
      { key: first },
      { params: { id }, body: { gracePeriodSeconds: 60 } },
    )
    t.equal(rotated.status, 200)
    const second: string = rotated.body.data.key
    // The secret part: the 12-character prefix is meant to be shown.
    const secrets = [first.slice(12), second.slice(12)]

    const later: AnyRes[] = [
      await call(app, 'listTenantClientKeys', { key: first }),
      await call(app, 'listTenantClientKeys', { bearerKey: second }),
      await call(app, 'getClientKey', { key: second }, { params: { id } }),
      await call(app, 'getClientKey', { token: jwt }, { params: { id } }),
      await call(app, 'listClientKeys', { key: PLATFORM_KEY }, { query: { tenantId: tenant.id } }),
      await call(app, 'updateClientKey', { key: second }, { params: { id }, body: { name: 'renamed' } }),
      await call(app, 'listTenantClientKeys', { key: 'ck_' + 'w'.repeat(43) }),
    ]
    await app.keyUsage.flush()
    later.push(
      await call(app, 'getClientKeyLogs', { token: jwt }, { params: { id } }),
      await call(app, 'getClientKeyStats', { token: jwt }, { params: { id } }),
    )
    t.equal(later.filter((r) => r.status === 200).length, later.length - 1, 'all served but the unknown key')
    t.notMatch(rotated.raw, secrets[0], 'the rotate response does not repeat the old value')
    for (const r of later) for (const s of secrets) t.notMatch(r.raw, s)

    const log = lines.join('\n')
    t.ok(lines.length > 10, 'trace logging on')
    for (const s of secrets) t.notMatch(log, s, 'no log line carries a value')

    const { rows } = await sql<{ doc: string }>`
    select row_to_json(k)::text as doc from client_keys k where id = ${id}
    union all select row_to_json(u)::text from client_key_usage u where key_id = ${id}
  `.execute(app.ctx.dbs.main)
    t.ok(rows.length > 5, 'the key row and its usage rows')
    for (const r of rows) for (const s of secrets) t.notMatch(r.doc, s, 'no stored row carries a value')
  },
)
