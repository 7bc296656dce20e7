import t from 'tap'
import { buildTestApp } from '../helpers/app.js'

t.test('GET /metrics: Prometheus text', async (t) => {
  const app = await buildTestApp(t)
  await app.inject({ method: 'GET', url: '/api/v1/health' })
  await app.inject({
    method: 'POST',
    url: '/api/v1/login',
    payload: { tenantCode: 'nope', identifier: 'a@b.test', password: 'x-y-z-1234' },
  })
  const res = await app.inject({ method: 'GET', url: '/metrics' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/plain/)
  t.match(res.body, /tessera_http_requests_total\{method="GET",route="\/api\/v1\/health",status="200"\} 1/)
  t.match(res.body, /tessera_http_request_duration_seconds_bucket\{.*le="\+Inf"\}/)
  t.match(res.body, /tessera_logins_total\{outcome="failure"\} 1/)
  t.match(res.body, /tessera_bcrypt_queue_depth \d+/)
  t.match(res.body, /tessera_db_pool_connections\{state="total"\} \d+/)
})

t.test('GET /metrics with METRICS_TOKEN requires it', async (t) => {
  const app = await buildTestApp(t, { METRICS_TOKEN: 'scrape-token-123' })
  const none = await app.inject({ method: 'GET', url: '/metrics' })
  t.equal(none.statusCode, 401)
  t.match(none.headers['content-type'], /^text\/plain/)
  const wrong = await app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: 'Bearer nope' },
  })
  t.equal(wrong.statusCode, 401)
  const ok = await app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: 'Bearer scrape-token-123' },
  })
  t.equal(ok.statusCode, 200)
})
