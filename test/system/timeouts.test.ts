import { connect, type Socket } from 'node:net'
import t from 'tap'
import { request } from 'undici'
import { buildTestApp } from '../helpers/app.js'

const SLOW_CLIENTS = 200

interface SlowClient {
  socket: Socket
  received: () => string
  closed: Promise<void>
  isClosed: () => boolean
}

/**
 * Opens a connection that sends `head` at once, then one byte of `drip` every 200 ms (none when
 * `drip` is empty), never finishing its request.
 */
function slowClient(port: number, head: string, drip: string): Promise<SlowClient> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    let closedFlag = false
    let timer: NodeJS.Timeout | undefined
    const closed = new Promise<void>((done) =>
      socket.on('close', () => {
        closedFlag = true
        clearInterval(timer)
        done()
      }),
    )
    socket.on('data', (c) => chunks.push(c))
    socket.on('error', () => {})
    socket.once('connect', () => {
      socket.write(head)
      let i = 0
      if (drip) {
        timer = setInterval(() => {
          if (socket.writable) socket.write(drip[i++ % drip.length] ?? ' ')
        }, 200)
      }
      resolve({
        socket,
        received: () => Buffer.concat(chunks).toString('latin1'),
        closed,
        isClosed: () => closedFlag,
      })
    })
    socket.once('error', reject)
  })
}

const within = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([
    p,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms).unref(),
    ),
  ])

t.test('HTTP server timeouts are set (issue 10, item 4)', async (t) => {
  const app = await buildTestApp(t)
  t.equal(app.server.requestTimeout, 30_000, 'a whole request must arrive within 30 s')
  t.equal(app.server.headersTimeout, 10_000, 'its headers within 10 s')
  t.equal(app.server.keepAliveTimeout, 72_000, 'idle kept-alive sockets outlive a 60 s balancer idle timeout')
  t.ok(app.server.headersTimeout <= app.server.requestTimeout)
})

t.test('slow clients (slowloris) neither block the service nor hold sockets forever', async (t) => {
  // Test-only short timeouts; the production values are checked above.
  const app = await buildTestApp(
    t,
    {},
    { httpTimeouts: { requestTimeout: 3000, headersTimeout: 1500, connectionsCheckingInterval: 100 } },
  )
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }

  const slowBody = (i: number) =>
    'POST /api/v1/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
    `X-Forwarded-For: 10.9.${i >> 8}.${i & 255}\r\nContent-Length: 1000\r\n\r\n{"tenantCode":"`
  const clients: SlowClient[] = []
  for (let i = 0; i < SLOW_CLIENTS; i++) {
    // Half trickle a byte at a time, half go silent after the headers.
    clients.push(await slowClient(port, slowBody(i), i % 2 === 0 ? 'abcdefgh' : ''))
  }
  // A slow-headers client too: its request line and headers never end.
  const slowHeaders = await slowClient(port, 'GET /api/v1/health HTTP/1.1\r\nHost: x\r\n', 'X-a: b\r\n')
  t.teardown(() => {
    for (const c of [...clients, slowHeaders]) c.socket.destroy()
  })

  await new Promise((r) => setTimeout(r, 300))
  const res = await within(request(`${address}/api/v1/health`), 2000, 'health')
  t.equal(res.statusCode, 200, 'another client is answered promptly while the slow ones hang')
  await res.body.dump()
  t.equal(clients.filter((c) => c.isClosed()).length, 0, 'the slow clients were still connected then')

  await within(Promise.all([...clients, slowHeaders].map((c) => c.closed)), 8000, 'closing the slow sockets')
  t.pass(`all ${SLOW_CLIENTS + 1} slow sockets closed by the server`)
  const answered = [...clients, slowHeaders].filter((c) => {
    const text = c.received()
    return (
      /^HTTP\/1\.1 408 /.test(text) &&
      /\r\nx-request-id: [0-9a-f-]{36}\r\n/i.test(text) &&
      text.endsWith('\r\n\r\n{"success":false,"error":"Request timeout","code":"VALIDATION_ERROR"}')
    )
  })
  t.equal(answered.length, SLOW_CLIENTS + 1, 'each was answered 408 in the envelope before the close')

  const after = await request(`${address}/api/v1/health`)
  t.equal(after.statusCode, 200, 'and the service still answers')
  await after.body.dump()
})
