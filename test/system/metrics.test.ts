import t from 'tap'
import { buildTestApp } from '../helpers/app.js'

t.test('getMetrics: Prometheus text', async (t) => {
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
  // prom-client writes `le` first among a bucket's labels: the order of labels carries no meaning.
  t.match(
    res.body,
    /tessera_http_request_duration_seconds_bucket\{(?=[^}]*le="\+Inf")(?=[^}]*route="\/api\/v1\/health")[^}]*\} 1\n/,
  )
  t.match(res.body, /tessera_logins_total\{outcome="failure"\} 1/)
  t.match(res.body, /tessera_bcrypt_queue_depth \d+/)
  t.match(res.body, /tessera_db_pool_connections\{state="total"\} \d+/)
  t.match(res.body, /tessera_change_channel_up 1/)
})

t.test('getMetrics: the Node process metrics, once, and request series per app', async (t) => {
  const first = await buildTestApp(t)
  const second = await buildTestApp(t)
  await first.inject({ method: 'GET', url: '/api/v1/health' })
  const body = (await second.inject({ method: 'GET', url: '/metrics' })).body
  for (const name of [
    'process_cpu_user_seconds_total',
    'process_resident_memory_bytes',
    'nodejs_heap_size_used_bytes',
    'nodejs_eventloop_lag_seconds',
    'nodejs_gc_duration_seconds',
    'nodejs_active_handles_total',
  ]) {
    t.equal(body.split(`# TYPE ${name} `).length, 2, `${name} exactly once`)
  }
  t.notMatch(body, /tessera_http_requests_total\{method="GET",route="\/api\/v1\/health"/, 'not the other app')
})

t.test('getMetrics: with METRICS_TOKEN set, requires it', async (t) => {
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
