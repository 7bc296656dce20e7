import t from 'tap'
import { sql } from 'kysely'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, createUser } from '../helpers/fixtures.js'
import { loginTokens, logoutWith, refresh } from '../helpers/call.js'
import { sessionOfToken } from '../helpers/sessions.js'
import { createManualClock } from '../../src/lib/clock.js'
import { sha256Hex, uuidV7 } from '../../src/lib/tokens.js'
import {
  newRefreshTokenFor,
  newSelectorToken,
  refreshTokenLookup,
  refreshTokenTenant,
} from '../../src/modules/sessions/refresh-token.js'

// Refresh tokens as selector and verifier (issue 45, migration 0020): what a login and a refresh answer,
// how a row is found, and the tokens of the older form, issued before the change, still refreshing.

const SELECTOR_FORM = /^[A-Za-z0-9_-]{86}$/

t.test('refreshTokenLookup: the two forms, and anything else', async (t) => {
  const tenant = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'
  const id = uuidV7(Date.now())
  const token = newSelectorToken(tenant, id)
  t.match(token, SELECTOR_FORM, '86 base64url characters')
  t.equal(refreshTokenTenant(token), tenant)
  t.same(
    refreshTokenLookup(token),
    { tenantId: tenant, id, hash: sha256Hex(token) },
    'found by its row id, then its hash',
  )
  const old = newRefreshTokenFor(tenant)
  t.equal(old.length, 64)
  t.same(
    refreshTokenLookup(old),
    { tenantId: tenant, id: null, hash: sha256Hex(old) },
    'the older form by its hash alone',
  )
  t.equal(refreshTokenLookup(token.slice(0, 85)), null, 'a cut token')
  t.equal(refreshTokenLookup(`${token.slice(0, 85)}+`), null, 'not base64url')
  t.equal(refreshTokenLookup('x'.repeat(70)), null, 'neither length')
  t.equal(refreshTokenLookup(''), null)
})

t.test('refresh: tokens of the selector form', async (t) => {
  const clock = createManualClock()
  const app = await buildTestApp(t, {}, { clock })
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant, { roles: ['user'] })
  const db = app.ctx.dbs.forTenant(tenant.id)
  const row = (token: string) =>
    db
      .selectFrom('refresh_tokens')
      .select(['id', 'token_hash', 'by_selector', 'revoked_at', 'replaced_by'])
      .where('token_hash', '=', sha256Hex(token))
      .executeTakeFirstOrThrow()

  t.test('a login and a refresh answer the selector form; the row keeps only its hash', async (t) => {
    const first = await loginTokens(app, user)
    t.match(first.refreshToken, SELECTOR_FORM)
    const stored = await row(first.refreshToken)
    t.equal(stored.by_selector, true)
    t.equal(stored.id, refreshTokenLookup(first.refreshToken)?.id, 'the selector is the row id')
    t.not(stored.token_hash, first.refreshToken, 'a hash, not the value')
    const res = await refresh(app, first.refreshToken)
    t.equal(res.status, 200)
    t.match(res.data.refreshToken, SELECTOR_FORM)
    const next = await row(res.data.refreshToken)
    t.equal(
      (await row(first.refreshToken)).replaced_by,
      next.id,
      'the successor is the row the new token names',
    )
  })

  t.test(
    "401 for a token with the right row id and another value: the row's token still refreshes",
    async (t) => {
      const { refreshToken } = await loginTokens(app, user)
      const lookup = refreshTokenLookup(refreshToken)
      if (!lookup?.id) throw new Error('not of the selector form')
      const forged = newSelectorToken(tenant.id, lookup.id)
      const res = await refresh(app, forged)
      t.equal(res.status, 401)
      t.equal(res.code, 'INVALID_REFRESH_TOKEN')
      t.equal((await row(refreshToken)).revoked_at, null, 'the real token was not consumed')
      t.equal((await refresh(app, refreshToken)).status, 200)
    },
  )

  t.test("401 for a row id of another tenant's token under this tenant's id", async (t) => {
    const other = await createTenant(app)
    const stranger = await createUser(app, other, { roles: ['user'] })
    const theirs = await loginTokens(app, stranger)
    const raw = Buffer.from(theirs.refreshToken, 'base64url')
    Buffer.from(tenant.id.replace(/-/g, ''), 'hex').copy(raw, 0)
    const res = await refresh(app, raw.toString('base64url'))
    t.equal(res.status, 401)
    t.equal((await refresh(app, theirs.refreshToken)).status, 200, 'theirs untouched')
  })

  t.test("the hash index holds only the older form's rows", async (t) => {
    const { rows } = await sql<{ indexdef: string }>`select indexdef from pg_indexes
      where tablename = 'refresh_tokens' and indexname = 'refresh_tokens_hashed'`.execute(db)
    t.match(rows[0]?.indexdef ?? '', /UNIQUE INDEX .* \(token_hash\) WHERE \(NOT by_selector\)/)
    const { rows: unique } = await sql<{ n: number }>`select count(*)::int as n from pg_constraint
      where conname = 'refresh_tokens_token_hash_key'`.execute(db)
    t.equal(unique[0]?.n, 0, 'the whole-table unique constraint on token_hash is gone')
  })
})

t.test('refresh: tokens of the older form, issued before migration 0020', async (t) => {
  const clock = createManualClock()
  const app = await buildTestApp(t, {}, { clock })
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant, { roles: ['user'] })
  const db = app.ctx.dbs.forTenant(tenant.id)

  /** A session as a login made it before the change: its token of the older form, found by hash. */
  const oldSession = async () => {
    const { refreshToken } = await loginTokens(app, user)
    const session = await sessionOfToken(app, tenant.id, refreshToken)
    const old = newRefreshTokenFor(tenant.id)
    await db
      .updateTable('refresh_tokens')
      .set({ token_hash: sha256Hex(old), by_selector: false, id: uuidV7(clock.now()) })
      .where('token_hash', '=', sha256Hex(refreshToken))
      .execute()
    return { old, sessionId: session.id }
  }

  t.test('200: the first refresh answers a token of the selector form, which refreshes again', async (t) => {
    const { old, sessionId } = await oldSession()
    const res = await refresh(app, old)
    t.equal(res.status, 200)
    t.match(res.data.refreshToken, SELECTOR_FORM)
    t.equal((await sessionOfToken(app, tenant.id, res.data.refreshToken)).id, sessionId, 'the same session')
    t.equal((await refresh(app, res.data.refreshToken)).status, 200)
    const again = await refresh(app, old)
    t.equal(again.status, 401, 'the old one is spent')
  })

  t.test('reuse of an old-form token after the grace revokes the session, successor included', async (t) => {
    const { old } = await oldSession()
    const successor = (await refresh(app, old)).data.refreshToken
    clock.advance(31_000)
    t.equal((await refresh(app, old)).status, 401)
    t.equal((await refresh(app, successor)).status, 401, 'the session was revoked')
  })

  t.test('reuse within the grace answers 401 and keeps the session', async (t) => {
    const { old } = await oldSession()
    const successor = (await refresh(app, old)).data.refreshToken
    clock.advance(2_000)
    t.equal((await refresh(app, old)).status, 401)
    t.equal((await refresh(app, successor)).status, 200)
  })

  t.test('logout with an old-form token ends its session', async (t) => {
    const { old, sessionId } = await oldSession()
    const { accessToken } = await loginTokens(app, user)
    const res = await logoutWith(app, accessToken, old)
    t.equal(res.status, 200)
    t.equal(res.data.revoked, true)
    const s = await db
      .selectFrom('sessions')
      .select('revoked_at')
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow()
    t.not(s.revoked_at, null)
  })
})
