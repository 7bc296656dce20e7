import t from 'tap'
import { pino } from 'pino'
import { requestLogger } from '../../src/app/logger.js'
import { buildLoggedTestApp } from '../helpers/app.js'
import { call, loginAs, refresh } from '../helpers/call.js'
import { createTenant, createUser, freshIp, PASSWORD } from '../helpers/fixtures.js'

t.test('logs never carry passwords, tokens or keys', async (t) => {
  const { app, lines } = await buildLoggedTestApp(t)
  const tenant = await createTenant(app)
  const user = await createUser(app, tenant)
  const ip = freshIp()
  const login = await loginAs(app, user, { ip })
  t.equal(login.status, 200)
  const { accessToken, refreshToken } = login.data
  await call(app, 'getMe', { token: accessToken })
  await refresh(app, refreshToken)
  await call(app, 'getMe', { key: 'ck_' + 'z'.repeat(43) })
  app.log.error({ err: new Error('connect to postgres://bob:hunter2@db.internal/x failed') }, 'db problem')
  const all = lines.join('\n')
  t.ok(lines.length > 3, 'something was logged')
  t.notMatch(all, PASSWORD, 'no password')
  t.notMatch(all, accessToken, 'no access token')
  t.notMatch(all, refreshToken, 'no refresh token')
  t.notMatch(all, 'z'.repeat(43), 'no client key')
  t.notMatch(all, 'hunter2', 'no URL credentials')
})

t.test(
  'request logger: pino’s child is made only for a line that is written, with the request id',
  async (t) => {
    const lines: string[] = []
    const parent = pino({ level: 'warn' }, { write: (l: string) => void lines.push(l) })
    let children = 0
    const child = parent.child.bind(parent)
    parent.child = ((...args: Parameters<typeof child>) => (
      children++,
      child(...args)
    )) as typeof parent.child
    const log = requestLogger(parent, { reqId: 'req-1' }, {})
    log.info({ a: 1 }, 'quiet')
    log.debug('quiet')
    t.equal(children, 0, 'no child for lines below the level')
    t.equal(log.level, 'warn')
    log.warn({ a: 1 }, 'loud %s', 'line')
    log.error('again')
    t.equal(children, 1, 'one child, made once')
    t.same(
      lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .map(({ reqId, msg, a }) => ({ reqId, msg, a })),
      [
        { reqId: 'req-1', msg: 'loud line', a: 1 },
        { reqId: 'req-1', msg: 'again', a: undefined },
      ],
    )
    log.level = 'info'
    log.info('now written')
    t.equal(lines.length, 3, 'a level set on the request logger applies to it')
    t.equal(parent.level, 'warn', 'and not to the parent')
    t.equal(
      requestLogger(parent, { reqId: 'req-2' }, { level: 'debug' }).level,
      'debug',
      'a route level: pino’s child',
    )
  },
)

t.test('request logger: the access line at info carries the request id the response names', async (t) => {
  const { app, lines } = await buildLoggedTestApp(t)
  const res = await call(app, 'getHealth', { headers: { 'x-request-id': 'corr-42' } })
  t.equal(res.headers['x-request-id'], 'corr-42')
  const access = lines
    .map((l) => JSON.parse(l) as { reqId?: string; msg?: string })
    .find((l) => l.msg === 'request completed')
  t.equal(access?.reqId, 'corr-42')
})

t.test(
  'request logger: fatal and trace go through the level, silent writes nothing, child binds more',
  async (t) => {
    const lines: string[] = []
    const parent = pino({ level: 'trace' }, { write: (l: string) => void lines.push(l) })
    const log = requestLogger(parent, { reqId: 'req-3' }, {})
    log.fatal('stop')
    log.trace('detail')
    log.silent('never')
    log.child({ part: 'inner' }).warn('from the child')
    const got = lines.map(
      (l) => JSON.parse(l) as { reqId?: string; msg?: string; level?: number; part?: string },
    )
    t.same(
      got.map(({ reqId, msg, level, part }) => ({ reqId, msg, level, part })),
      [
        { reqId: 'req-3', msg: 'stop', level: 60, part: undefined },
        { reqId: 'req-3', msg: 'detail', level: 10, part: undefined },
        { reqId: 'req-3', msg: 'from the child', level: 40, part: 'inner' },
      ],
    )
  },
)
