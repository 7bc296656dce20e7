import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs } from 'kysely'
import t from 'tap'
import { systemClock } from '../../src/lib/clock.js'
import { adapterFor } from '../../src/modules/oidc/adapter.js'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, createUser } from '../helpers/fixtures.js'

// The oidc-provider adapter's reads (src/modules/oidc/adapter.ts): a token lookup reads its grant, its provider
// session and its account in the same statement, and the library's three lookups of one token value (a type
// hint's absence) share one statement, for the request that asked; another request, or a write, reads afresh.

/** Counts the statements run through the Kysely instance it is added to. */
class Counting implements KyselyPlugin {
  count = 0
  /** `start:` and `end:` of each statement by the kind of its node, in the order they happened. */
  events: string[] = []
  private readonly kinds = new Map<unknown, string>()
  transformQuery(args: PluginTransformQueryArgs) {
    this.count++
    this.events.push(`start:${args.node.kind}`)
    this.kinds.set(args.queryId, args.node.kind)
    return args.node
  }
  async transformResult(args: PluginTransformResultArgs) {
    this.events.push(`end:${this.kinds.get(args.queryId)}`)
    return args.result
  }
}

const app = await buildTestApp(t)
const tenant = await createTenant(app)
const other = await createTenant(app)
const user = await createUser(app, tenant, { roles: ['admin'] })

function storage(tenantId: string, request: () => object | undefined) {
  const counting = new Counting()
  const db = app.ctx.dbs.forTenant(tenantId).withPlugin(counting)
  const s = adapterFor(db, tenantId, systemClock, false, request)
  return { counting, ...s }
}

// One grant, one provider session bound to it, one access token and one refresh token of the user's.
const seed = storage(tenant.id, () => undefined)
const { Adapter } = seed
await new Adapter('Grant').upsert('grant-1', { accountId: user.id, clientId: 'app' }, 3600)
await new Adapter('Session').upsert('session-1', { uid: 'uid-1', accountId: user.id }, 3600)
const at = {
  accountId: user.id,
  grantId: 'grant-1',
  sessionUid: 'uid-1',
  clientId: 'app',
  kind: 'AccessToken',
}
await new Adapter('AccessToken').upsert('at-1', at, 3600)
await new Adapter('RefreshToken').upsert('rt-1', { ...at, kind: 'RefreshToken' }, 3600)

t.test('a token lookup answers its grant, session and account from the same statement', async (t) => {
  const request = {}
  const { counting, Adapter, takeAccount } = storage(tenant.id, () => request)
  const token = await new Adapter('AccessToken').find('at-1')
  t.equal(token?.kind, 'AccessToken')
  t.equal(counting.count, 1)
  t.same(await new Adapter('Grant').find('grant-1'), { accountId: user.id, clientId: 'app' })
  t.same(await new Adapter('Session').findByUid('uid-1'), { uid: 'uid-1', accountId: user.id })
  const account = takeAccount(user.id)
  t.ok(account?.some((r) => r.kind === 'user' && JSON.parse(r.name).id === user.id))
  t.ok(account?.some((r) => r.kind === 'role' && r.name === 'admin'))
  t.equal(counting.count, 1, 'no further statement')
  // Taken once: a second ask reads.
  t.equal(takeAccount(user.id), undefined)
  t.same(await new Adapter('Grant').find('grant-1'), { accountId: user.id, clientId: 'app' })
  t.equal(counting.count, 2)
})

t.test('the three lookups of one token value share one statement; only its own model finds it', async (t) => {
  const request = {}
  const { counting, Adapter } = storage(tenant.id, () => request)
  const [access, credentials, refresh] = await Promise.all([
    new Adapter('AccessToken').find('rt-1'),
    new Adapter('ClientCredentials').find('rt-1'),
    new Adapter('RefreshToken').find('rt-1'),
  ])
  t.equal(access, undefined, 'a refresh token is no access token')
  t.equal(credentials, undefined)
  t.equal(refresh?.kind, 'RefreshToken')
  t.equal(counting.count, 1)
})

t.test('what one request read is not served to another', async (t) => {
  const first = {}
  let current: object = first
  const { counting, Adapter, takeAccount } = storage(tenant.id, () => current)
  await new Adapter('AccessToken').find('at-1')
  current = {}
  t.equal(takeAccount(user.id), undefined)
  await new Adapter('Grant').destroy('grant-1-unrelated')
  t.same(await new Adapter('Session').findByUid('uid-1'), { uid: 'uid-1', accountId: user.id })
  t.equal(counting.count, 3, 'the second request read the session itself')
  // Outside any request nothing is kept: each lookup reads.
  const loose = storage(tenant.id, () => undefined)
  await new loose.Adapter('AccessToken').find('at-1')
  await new loose.Adapter('Grant').find('grant-1')
  t.equal(loose.counting.count, 2)
})

t.test('a write in the request forgets what was read: a consumed token reads as consumed', async (t) => {
  await new seed.Adapter('RefreshToken').upsert('rt-2', { ...at, kind: 'RefreshToken' }, 3600)
  const request = {}
  const { counting, Adapter } = storage(tenant.id, () => request)
  const rt = new Adapter('RefreshToken')
  t.equal((await rt.find('rt-2'))?.consumed, undefined)
  await rt.consume('rt-2')
  t.type((await rt.find('rt-2'))?.consumed, 'number')
  t.equal(counting.count, 3)
  // A session written in the request is read afresh, not from the token's statement.
  await new Adapter('AccessToken').find('at-1')
  await new Adapter('Session').upsert('session-1', { uid: 'uid-1', accountId: user.id, changed: true }, 3600)
  t.same(await new Adapter('Session').findByUid('uid-1'), { uid: 'uid-1', accountId: user.id, changed: true })
  // A revoked grant (its tokens revoked, then itself destroyed, as the library's revoke.js does) is gone.
  await new Adapter('AccessToken').find('at-1')
  await new Adapter('AccessToken').revokeByGrantId('grant-1')
  t.equal(await new Adapter('AccessToken').find('at-1'), undefined)
  await new Adapter('Grant').destroy('grant-1')
  t.equal(await new Adapter('Grant').find('grant-1'), undefined)
})

t.test("another tenant's adapter finds none of it", async (t) => {
  await new seed.Adapter('Grant').upsert('grant-3', { accountId: user.id }, 3600)
  await new seed.Adapter('Session').upsert('session-3', { uid: 'uid-3', accountId: user.id }, 3600)
  const request = {}
  const { Adapter, takeAccount } = storage(other.id, () => request)
  const x = { accountId: user.id, grantId: 'grant-3', sessionUid: 'uid-3', kind: 'AccessToken' }
  await new Adapter('AccessToken').upsert('at-x', x, 3600)
  t.equal(await new Adapter('AccessToken').find('rt-1'), undefined)
  t.equal(await new Adapter('RefreshToken').find('rt-2'), undefined)
  // Its own token names this tenant's grant, session and user: none of them is read with it.
  t.ok(await new Adapter('AccessToken').find('at-x'))
  t.equal(await new Adapter('Grant').find('grant-3'), undefined)
  t.equal(await new Adapter('Session').findByUid('uid-3'), undefined)
  t.equal(takeAccount(user.id), undefined)
  // This tenant's own adapter finds them.
  const own = storage(tenant.id, () => request)
  t.ok(await new own.Adapter('Grant').find('grant-3'))
})

t.test('an expired token is not found, nor is what it names', async (t) => {
  await new seed.Adapter('AccessToken').upsert('at-old', { ...at, grantId: 'grant-2' }, 3600)
  await new seed.Adapter('Grant').upsert('grant-2', { accountId: user.id }, 3600)
  await app.ctx.dbs
    .forTenant(tenant.id)
    .updateTable('oidc_payloads')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('tenant_id', '=', tenant.id)
    .where('id', '=', 'at-old')
    .execute()
  const request = {}
  const { counting, Adapter, takeAccount } = storage(tenant.id, () => request)
  t.equal(await new Adapter('AccessToken').find('at-old'), undefined)
  t.equal(takeAccount(user.id), undefined)
  t.ok(await new Adapter('Grant').find('grant-2'), 'the grant is read on its own')
  t.equal(counting.count, 2)
})

/** A stand-in for the library's request context, as requestMiddleware touches it. */
function koaContext() {
  const emitted: unknown[] = []
  const headers = new Map<string, string>([['location', 'https://app.example.test/cb?code=never-stored']])
  return {
    emitted,
    headers,
    status: 200,
    body: 'tokens' as unknown,
    remove: (name: string) => void headers.delete(name.toLowerCase()),
    app: { emit: (_e: 'error', err: unknown) => emitted.push(err) },
  }
}

const stored = (id: string) =>
  app.ctx.dbs
    .forTenant(tenant.id)
    .selectFrom('oidc_payloads')
    .select(['id', 'consumed_at'])
    .where('tenant_id', '=', tenant.id)
    .where('id', '=', id)
    .executeTakeFirst()

t.test(
  "a wrapped request's short-lived writes wait, and go in one statement before its answer",
  async (t) => {
    await new seed.Adapter('RefreshToken').upsert('rt-wb', { ...at, kind: 'RefreshToken' }, 3600)
    const request = koaContext()
    const { counting, Adapter, requestMiddleware } = storage(tenant.id, () => request)
    await requestMiddleware(request, async () => {
      // A consume goes at once, as before: a used token reads as used to the next request.
      await new Adapter('RefreshToken').consume('rt-wb')
      t.equal(counting.count, 1)
      t.ok((await stored('rt-wb'))?.consumed_at, 'the old token consumed at once')
      await new Adapter('RefreshToken').upsert('rt-wb-next', { ...at, kind: 'RefreshToken' }, 3600)
      await new Adapter('AccessToken').upsert('at-wb', at, 3600)
      t.equal(counting.count, 1, 'the two upserts not written yet')
      t.equal(await stored('at-wb'), undefined)
    })
    t.equal(counting.count, 2, 'one statement for the two')
    t.ok(await stored('rt-wb-next'))
    t.ok(await stored('at-wb'))
    t.same([request.status, request.body], [200, 'tokens'])
    t.ok(request.headers.has('location'))

    // A read in the request sees what waited: it is written first.
    await requestMiddleware(request, async () => {
      await new Adapter('AccessToken').upsert('at-wb-2', at, 3600)
      t.ok(await new Adapter('AccessToken').find('at-wb-2'))
    })
    t.equal(counting.count, 4)

    // Two writes of one row are not put in one statement (it would not keep their order).
    await requestMiddleware(request, async () => {
      await new Adapter('AccessToken').upsert('at-wb-3', at, 3600)
      await new Adapter('AccessToken').upsert('at-wb-3', { ...at, second: true }, 3600)
    })
    t.equal(counting.count, 6)
    const kept = await new seed.Adapter('AccessToken').find('at-wb-3')
    t.equal(kept?.second, true, 'the later write is the one kept')
    t.equal(request.emitted.length, 0)
  },
)

t.test('two calls of one request side by side do not pass each other’s write', async (t) => {
  await new seed.Adapter('Grant').upsert('grant-wb', { accountId: user.id }, 3600)
  const request = koaContext()
  const { counting, Adapter, requestMiddleware } = storage(tenant.id, () => request)
  await requestMiddleware(request, async () => {
    await new Adapter('AccessToken').upsert('at-wb-grant', { ...at, grantId: 'grant-wb' }, 3600)
    // As the library's revoke.js: every model's revokeByGrantId at once.
    await Promise.all([
      new Adapter('AccessToken').revokeByGrantId('grant-wb'),
      new Adapter('RefreshToken').revokeByGrantId('grant-wb'),
    ])
  })
  t.equal(await stored('at-wb-grant'), undefined, 'the token went with its grant')
  // Whatever the pool's timing: neither revocation started before the waiting write had ended.
  const ended = counting.events.indexOf('end:RawNode')
  t.ok(ended >= 0 && ended < counting.events.indexOf('start:DeleteQueryNode'), counting.events.join(' '))
})

t.test('a failed write-behind answers server_error, and nothing of it is stored', async (t) => {
  const request = koaContext()
  const { Adapter, requestMiddleware } = storage(tenant.id, () => request)
  await requestMiddleware(request, async () => {
    await new Adapter('AccessToken').upsert('at-bad-1', at, 3600)
    // A lone surrogate: JSON, but PostgreSQL's jsonb refuses it, so the statement fails.
    await new Adapter('AccessToken').upsert('at-bad-2', { ...at, note: '\ud800' }, 3600)
  })
  t.equal(request.status, 500)
  t.same(request.body, { error: 'server_error', error_description: 'oops! something went wrong' })
  t.notOk(request.headers.has('location'), 'no redirect to a code that was never stored')
  t.equal(request.emitted.length, 1)
  const rows = await app.ctx.dbs
    .forTenant(tenant.id)
    .selectFrom('oidc_payloads')
    .select('id')
    .where('tenant_id', '=', tenant.id)
    .where('id', 'in', ['at-bad-1', 'at-bad-2'])
    .execute()
  t.same(rows, [], 'one statement: neither write is stored')
})

t.test('outside a wrapped request every write goes at once', async (t) => {
  const request = {}
  const { counting, Adapter } = storage(tenant.id, () => request)
  await new Adapter('AccessToken').upsert('at-now', at, 3600)
  t.equal(counting.count, 1)
})
