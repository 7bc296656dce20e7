/**
 * A load generator's own ceiling for `POST /validate`: a server that does no work but answer every request with
 * the bytes the service once answered it (status line, headers and body), picked by the request's Authorization.
 *
 * Why: at 25,000-30,000 validations a second the load generator spends about as much CPU per response as the
 * service does, on the same two cores, much of it parsing the response's 22 header lines (the contract's
 * security headers, rate-limit headers, request id and cache policy). The replay's rate is what no server
 * sending those bytes can pass with that driver on that machine, so the service's rate reads as a share of it.
 * `make bench` prints its driver's ceiling beside its validate row; bench/peer-ceiling.ts does the same for the
 * Better Auth harness's driver.
 */
import { connect } from 'node:net'
import { Worker } from 'node:worker_threads'

/** The service's complete answer (as sent on the wire) to one body-less request. */
export async function captureResponse(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<Buffer> {
  const lines = [`${method} ${path} HTTP/1.1`, `host: 127.0.0.1:${port}`]
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`)
  const request = `${lines.join('\r\n')}\r\ncontent-length: 0\r\n\r\n`
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request))
    let received = Buffer.alloc(0)
    // Whatever ends the capture closes the socket; a server that closes it first leaves the capture failed.
    const settle = (outcome: () => void) => {
      socket.destroy()
      outcome()
    }
    socket.on('error', (err) => settle(() => reject(err)))
    socket.on('close', () => reject(new Error('the service closed the connection before a whole answer')))
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      const end = received.indexOf('\r\n\r\n')
      if (end < 0) return
      const head = received.subarray(0, end).toString('latin1')
      const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1]
      if (length === undefined) return settle(() => reject(new Error(`no content-length in:\n${head}`)))
      const total = end + 4 + Number(length)
      if (received.length < total) return
      settle(() => resolve(received.subarray(0, total)))
    })
  })
}

// The replaying server, in a thread of its own so that it never takes the driver's CPU. Plain JavaScript: a
// worker evaluates it as given. Requests carry no body, so each one ends at its blank line. A validate answer's
// `expiresIn` counts down as the service's would (a client may check it), written over the captured digits and
// padded with JSON whitespace so the length stays.
const REPLAY_SERVER = `
const { workerData, parentPort } = require('node:worker_threads')
const { createServer } = require('node:net')
const replies = new Map()
for (const [authorization, bytes] of workerData) {
  const reply = Buffer.from(bytes)
  const text = reply.toString('latin1')
  const left = /"expiresIn":(\\d+)/.exec(text)
  const exp = /"exp":(\\d+)/.exec(text)
  replies.set(authorization, left && exp
    ? { reply, at: left.index + 12, width: left[1].length, exp: Number(exp[1]) }
    : { reply })
}
const server = createServer((socket) => {
  socket.on('error', () => {})
  let pending = ''
  socket.on('data', (chunk) => {
    pending += chunk.toString('latin1')
    for (let end = pending.indexOf('\\r\\n\\r\\n'); end >= 0; end = pending.indexOf('\\r\\n\\r\\n')) {
      const head = pending.slice(0, end)
      pending = pending.slice(end + 4)
      const found = replies.get(/\\r\\nauthorization: *([^\\r]*)/i.exec(head)?.[1])
      if (!found) { socket.end('HTTP/1.1 500 Not Captured\\r\\ncontent-length: 0\\r\\n\\r\\n'); return }
      if (found.exp) {
        const left = String(Math.max(0, Math.round(found.exp - Date.now() / 1000))).padStart(found.width, ' ')
        found.reply.write(left, found.at, 'latin1')
      }
      socket.write(found.reply)
    }
  })
})
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port))
`

/** Starts a server that answers each request with the reply captured for its Authorization header. */
export async function replayServer(
  replies: ReadonlyMap<string, Buffer>,
): Promise<{ port: number; stop: () => Promise<void> }> {
  const worker = new Worker(REPLAY_SERVER, { eval: true, workerData: [...replies] })
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  return {
    port,
    stop: async () => {
      await worker.terminate()
    },
  }
}
