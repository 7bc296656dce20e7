import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call, callRaw } from '../helpers/call.js'
import { defaultBackend } from '../helpers/db.js'

t.test('getHealth, getHealthRoot: health answers on both paths with the database status', async (t) => {
  const app = await buildTestApp(t)
  for (const [op, url] of [
    ['getHealth', '/api/v1/health'],
    ['getHealthRoot', '/health'],
  ] as const) {
    const res = await call(app, op)
    t.equal(res.status, 200, url)
    const { data } = res
    t.equal(data.status, 'ok')
    t.equal(data.database.status, 'up')
    t.type(data.database.latencyMs, 'number')
    t.equal(data.redis.status, 'disabled')
    t.same(data.mail, { status: 'disabled' }, 'mail off: the component is there, with its status')
    t.equal(data.changeChannel.status, defaultBackend() === 'postgres' ? 'up' : 'local')
    t.same(Object.keys(data.routingPool).sort(), [
      'idleConnections',
      'pools',
      'tenants',
      'totalConnections',
      'waiting',
    ])
  }
})

t.test('getHealth: 503 SERVICE_UNAVAILABLE with component statuses when the database is down', async (t) => {
  const app = await buildTestApp(t)
  const ctx = app.ctx as { pingMain: () => Promise<number> }
  const original = ctx.pingMain
  ctx.pingMain = async () => {
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
  }
  t.teardown(() => {
    ctx.pingMain = original
  })
  const res = await call(app, 'getHealth')
  t.equal(res.status, 503)
  const { body } = res
  t.equal(body.code, 'SERVICE_UNAVAILABLE')
  t.equal((body.details as { database: { status: string } }).database.status, 'down')
})

t.test('docs: explorer, JSON and YAML document', async (t) => {
  const app = await buildTestApp(t)
  const html = await callRaw(app, 'GET', '/docs/')
  t.equal(html.status, 200)
  t.match(html.headers['content-type'], /text\/html/)
  const json = await callRaw(app, 'GET', '/docs/json')
  t.equal(json.status, 200)
  t.equal(json.body.openapi, '3.1.0')
  t.ok(json.body.paths['/api/v1/login'])
  const yaml = await callRaw(app, 'GET', '/docs/yaml')
  t.equal(yaml.status, 200)
  t.match(yaml.raw, /openapi: 3\.1\.0/)
})
