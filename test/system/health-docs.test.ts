import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { defaultBackend } from '../helpers/db.js'

t.test('getHealth, getHealthRoot: health answers on both paths with the database status', async (t) => {
  const app = await buildTestApp(t)
  for (const url of ['/api/v1/health', '/health']) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 200, url)
    const { data } = res.json()
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
  const res = await app.inject({ method: 'GET', url: '/api/v1/health' })
  t.equal(res.statusCode, 503)
  const body = res.json()
  t.equal(body.code, 'SERVICE_UNAVAILABLE')
  t.equal(body.details.database.status, 'down')
})

t.test('docs: explorer, JSON and YAML document', async (t) => {
  const app = await buildTestApp(t)
  const html = await app.inject({ method: 'GET', url: '/docs/' })
  t.equal(html.statusCode, 200)
  t.match(html.headers['content-type'], /text\/html/)
  const json = await app.inject({ method: 'GET', url: '/docs/json' })
  t.equal(json.statusCode, 200)
  t.equal(json.json().openapi, '3.1.0')
  t.ok(json.json().paths['/api/v1/login'])
  const yaml = await app.inject({ method: 'GET', url: '/docs/yaml' })
  t.equal(yaml.statusCode, 200)
  t.match(yaml.body, /openapi: 3\.1\.0/)
})
