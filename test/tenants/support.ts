// Test doubles of the tenant-routing tests: a stand-in PostgreSQL server, and environment variables for
// one test.
import { createServer, type AddressInfo, type Socket } from 'node:net'

/** What one connection to a fakePostgres server sent. */
export interface FakeConnection {
  /** The server's own address the client reached. */
  localAddress: string | undefined
  /** The client asked for TLS (SSLRequest); the fake answers that it has none. */
  sslRequested: boolean
  /** Startup parameters: user, database, application_name, ... */
  params: Record<string, string>
  /** The password sent in answer to a cleartext password request, if any. */
  password: string | undefined
}

/**
 * A stand-in PostgreSQL server that records what clients send (TLS request, startup parameters, the
 * cleartext password it asks for) and then refuses the login (28P01). `host` defaults to 127.0.0.1.
 */
export async function fakePostgres(host = '127.0.0.1') {
  const seen: FakeConnection[] = []
  const sockets = new Set<Socket>()
  const server = createServer((sock) => {
    sockets.add(sock)
    sock.on('close', () => sockets.delete(sock))
    sock.on('error', () => undefined)
    const conn: FakeConnection = {
      localAddress: sock.localAddress,
      sslRequested: false,
      params: {},
      password: undefined,
    }
    seen.push(conn)
    let buf = Buffer.alloc(0)
    let started = false
    sock.on('data', (data) => {
      buf = Buffer.concat([buf, data])
      for (;;) {
        if (!started) {
          if (buf.length < 8 || buf.length < buf.readInt32BE(0)) return
          const len = buf.readInt32BE(0)
          const code = buf.readInt32BE(4)
          const body = buf.subarray(8, len)
          buf = buf.subarray(len)
          if (code === 80877103) {
            conn.sslRequested = true
            sock.write('N')
            continue
          }
          const parts = body.toString('utf8').split('\0')
          for (let i = 0; i + 1 < parts.length; i += 2) {
            const [name, value] = [parts[i], parts[i + 1]]
            if (name && value !== undefined) conn.params[name] = value
          }
          started = true
          const askPassword = Buffer.alloc(9)
          askPassword.write('R', 0)
          askPassword.writeInt32BE(8, 1)
          askPassword.writeInt32BE(3, 5) // AuthenticationCleartextPassword
          sock.write(askPassword)
          continue
        }
        if (buf.length < 5 || buf.length < 1 + buf.readInt32BE(1)) return
        const type = String.fromCharCode(buf.readUInt8(0))
        const len = buf.readInt32BE(1)
        const body = buf.subarray(5, 1 + len)
        buf = buf.subarray(1 + len)
        if (type === 'p') {
          conn.password = body.toString('utf8').replace(/\0$/, '')
          sock.end(errorResponse('28P01', 'password authentication failed'))
          return
        }
      }
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, host, () => resolve())
  })
  const port = (server.address() as AddressInfo).port
  return {
    port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0C${code}\0M${message}\0\0`, 'utf8')
  const head = Buffer.alloc(5)
  head.write('E', 0)
  head.writeInt32BE(4 + fields.length, 1)
  return Buffer.concat([head, fields])
}

/** Sets environment variables for the test's duration and restores them in teardown. */
export function withEnv(t: { teardown(fn: () => unknown): void }, vars: Record<string, string>): void {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]))
  Object.assign(process.env, vars)
  t.teardown(() => {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  })
}
