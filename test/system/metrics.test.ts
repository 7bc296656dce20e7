import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call, login } from '../helpers/call.js'

t.test('getMetrics: Prometheus text', async (t) => {
  const app = await buildTestApp(t)
  await call(app, 'getHealth')
  await login(app, 'nope', 'a@b.test', 'x-y-z-1234')
  const res = await call(app, 'getMetrics')
  t.equal(res.status, 200)
  t.match(res.headers['content-type'], /^text\/plain/)
  t.match(res.raw, /tessera_http_requests_total\{method="GET",route="\/api\/v1\/health",status="200"\} 1/)
  // prom-client writes `le` first among a bucket's labels: the order of labels carries no meaning.
  t.match(
    res.raw,
    /tessera_http_request_duration_seconds_bucket\{(?=[^}]*le="\+Inf")(?=[^}]*route="\/api\/v1\/health")[^}]*\} 1\n/,
  )
  t.match(res.raw, /tessera_logins_total\{outcome="failure"\} 1/)
  t.match(res.raw, /tessera_bcrypt_queue_depth \d+/)
  t.match(res.raw, /tessera_db_pool_connections\{state="total"\} \d+/)
  t.match(res.raw, /tessera_change_channel_up 1/)
})

t.test('getMetrics: the Node process metrics, once, and request series per app', async (t) => {
  const first = await buildTestApp(t)
  const second = await buildTestApp(t)
  await call(first, 'getHealth')
  const body = (await call(second, 'getMetrics')).raw
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
  const none = await call(app, 'getMetrics')
  t.equal(none.status, 401)
  t.match(none.headers['content-type'], /^text\/plain/)
  const wrong = await call(app, 'getMetrics', { token: 'nope' })
  t.equal(wrong.status, 401)
  const ok = await call(app, 'getMetrics', { token: 'scrape-token-123' })
  t.equal(ok.status, 200)
})
