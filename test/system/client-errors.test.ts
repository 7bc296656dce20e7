import { connect } from 'node:net'
import t, { type Test } from 'tap'
import { buildTestApp } from '../helpers/app.js'

interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
  /** The server closed the connection. */
  closed: boolean
}

/** Writes `data` on a fresh connection and reads until the server closes it (or 5 s pass). */
function exchange(port: number, data: string | Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    const finish = (closed: boolean) => {
      clearTimeout(timer)
      socket.destroy()
      const text = Buffer.concat(chunks).toString('latin1')
      const [head = '', body = ''] = text.split('\r\n\r\n', 2)
      const [statusLine = '', ...lines] = head.split('\r\n')
      const headers: Record<string, string> = {}
      for (const line of lines) {
        const i = line.indexOf(':')
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim()
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, closed })
    }
    const timer = setTimeout(() => finish(false), 5000)
    socket.on('data', (c) => chunks.push(c))
    socket.on('close', () => finish(true))
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ECONNRESET') reject(err)
    })
    socket.write(data)
  })
}

function checkEnvelope(t: Test, res: RawAnswer, status: number, secret: string): void {
  t.equal(res.status, status, 'status')
  const body = JSON.parse(res.body) as Record<string, unknown>
  t.same(Object.keys(body).sort(), ['code', 'error', 'success'], 'the envelope and nothing else')
  t.equal(body.success, false)
  t.equal(body.code, 'VALIDATION_ERROR')
  t.match(res.headers['content-type'], /^application\/json/)
  t.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body), 'content-length')
  t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'a generated request id')
  t.equal(res.headers.connection, 'close')
  t.equal(res.headers['cache-control'], 'no-store')
  t.notMatch(res.body, secret, 'the request is not echoed')
  t.ok(res.closed, 'the server closed the connection')
}

// Errors Node's HTTP parser raises before Fastify sees a request (issue 10, item 3).
t.test('client errors on the socket answer in the envelope', async (t) => {
  const app = await buildTestApp(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }

  t.test('400 VALIDATION_ERROR for a malformed header line', async (t) => {
    const res = await exchange(
      port,
      'GET /api/v1/health?q=secret-in-url HTTP/1.1\r\nHost: x\r\nno colon secret-in-header\r\n\r\n',
    )
    checkEnvelope(t, res, 400, 'secret-in')
  })

  t.test('400 VALIDATION_ERROR for a request line that is not HTTP', async (t) => {
    const res = await exchange(port, 'HELLO secret-in-line\r\n\r\n')
    checkEnvelope(t, res, 400, 'secret-in')
  })

  t.test('400 VALIDATION_ERROR for a bad Content-Length', async (t) => {
    const res = await exchange(
      port,
      'POST /api/v1/login HTTP/1.1\r\nHost: x\r\nContent-Length: secret-length\r\n\r\n{}',
    )
    checkEnvelope(t, res, 400, 'secret-length')
  })

  t.test('431 VALIDATION_ERROR for headers over the size limit', async (t) => {
    const res = await exchange(
      port,
      `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: secret-${'a'.repeat(20 * 1024)}\r\n\r\n`,
    )
    checkEnvelope(t, res, 431, 'secret-')
  })

  t.test('400 VALIDATION_ERROR for a bad percent-encoding, over the socket too', async (t) => {
    const res = await exchange(
      port,
      'GET /api/v1/users/%E0%A4%A-secret-in-url HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    )
    t.equal(res.status, 400)
    t.same(JSON.parse(res.body), { success: false, error: 'Malformed URL', code: 'VALIDATION_ERROR' })
    t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/)
    t.notMatch(res.body, 'secret-in-url')
  })

  t.test('400 VALIDATION_ERROR for an HTTP/1.1 request without Host', async (t) => {
    const res = await exchange(port, 'GET /api/v1/nope?q=secret-in-url HTTP/1.1\r\n\r\n')
    t.equal(res.status, 400)
    t.same(JSON.parse(res.body), {
      success: false,
      error: 'Missing Host header',
      code: 'VALIDATION_ERROR',
    })
    t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/)
    t.equal(res.headers.connection, 'close')
    t.ok(res.closed)
  })

  t.test('the service keeps answering after client errors', async (t) => {
    const res = await exchange(port, 'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    t.equal(res.status, 200)
  })
})
