import t from 'tap'
import { Client } from 'undici'
import { buildTestApp } from '../helpers/app.js'
import { createTenant, createUser, PASSWORD } from '../helpers/fixtures.js'

t.test(
  'graceful shutdown: in-flight requests finish, later ones on a kept-alive connection get 503',
  async (t) => {
    // At production's bcrypt cost: the login below must still be running when close starts.
    const app = await buildTestApp(t, {}, { passwordCost: 12 })
    const tenant = await createTenant(app)
    const user = await createUser(app, tenant)
    const address = await app.listen({ port: 0, host: '127.0.0.1' })
    const client = new Client(address, { pipelining: 2 })
    t.teardown(() => client.destroy())

    const body = JSON.stringify({ tenantCode: tenant.code, identifier: user.email, password: PASSWORD })
    // A login takes one bcrypt compare (~250 ms), long enough to close the app while it runs.
    const slow = client.request({
      method: 'POST',
      path: '/api/v1/login',
      headers: { 'content-type': 'application/json' },
      body,
    })
    // Why 150 ms: the login must have reached its handler (bcrypt takes ~250 ms) before close starts.
    await new Promise((r) => setTimeout(r, 150))
    const closing = app.close()
    const late = client.request({ method: 'GET', path: '/api/v1/health' })

    const first = await slow
    t.equal(first.statusCode, 200, 'the request received before close completes normally')
    t.equal(first.headers.connection, 'close', 'and tells the client not to reuse the connection')
    t.equal(((await first.body.json()) as { success: boolean }).success, true)
    const second = await late.catch((err: Error) => err)
    if (second instanceof Error) {
      t.pass(`late request refused at the connection level (${second.message})`)
    } else {
      t.equal(second.statusCode, 503)
      t.equal(second.headers.connection, 'close')
      t.equal(((await second.body.json()) as { code: string }).code, 'SERVICE_UNAVAILABLE')
    }
    await closing
  },
)
