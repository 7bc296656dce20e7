import dns from 'node:dns'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { checkOutbound, isPublicAddress, outboundFetch, outboundUrlAllowed } from '../../src/lib/outbound.js'

// Every server here listens on 127.0.0.1, and no test sends a packet anywhere else: a public address is only
// ever checked, never fetched.

/** A loopback HTTP server that counts its connections and requests; closed in teardown. */
async function loopbackServer(
  tt: Test,
  handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end('hello'),
) {
  const seen = { connections: 0, requests: [] as string[] }
  const server = createServer((req, res) => {
    seen.requests.push(req.url ?? '')
    handler(req, res)
  })
  server.on('connection', () => seen.connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  tt.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return { seen, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

/** The refusal reason an outboundFetch rejection carries. */
async function rejectionReason(p: Promise<unknown>): Promise<unknown> {
  try {
    await p
  } catch (err) {
    return (err as Error & { cause?: { reason?: string } }).cause?.reason
  }
  return 'resolved'
}

t.test('isPublicAddress: IPv4 and IPv6, public and special-use', async (t) => {
  const publicOnes = [
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '100.63.255.255',
    '100.128.0.0',
    '172.32.0.1',
    '2606:4700::1',
    '2001:4860:4860::8888',
    '2a00:1450::1',
    '::ffff:8.8.8.8',
    '::FFFF:8.8.8.8',
  ]
  const special = [
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '0.1.2.3',
    '255.255.255.255',
    '240.0.0.1',
    '224.0.0.1',
    '239.255.255.250',
    '192.0.0.8',
    '192.0.2.1',
    '198.18.0.1',
    '198.51.100.7',
    '203.0.113.5',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::ffff:10.0.0.1',
    '::127.0.0.1',
    'fd00::1',
    'fc00::1',
    'fe80::1',
    'fe80::1%eth0',
    'ff02::1',
    '64:ff9b::7f00:1',
    '100::1',
    '2001::1',
    '2001:db8::1',
    '2002:7f00:1::1',
    '3fff::1',
    'not-an-address',
    '',
    '010.0.0.1',
    '8.8.8.8/32',
  ]
  for (const a of publicOnes) t.equal(isPublicAddress(a), true, `${a} is public`)
  for (const a of special) t.equal(isPublicAddress(a), false, `${a} is not public`)
})

t.test('outboundUrlAllowed: the URL rule alone, no DNS', async (t) => {
  const listed = ['127.0.0.1', '::1', 'idp.internal']
  const cases: [string, boolean][] = [
    ['https://idp.example.com/logout', true],
    ['https://127.0.0.1/logout', true],
    ['http://idp.example.com/logout', false],
    ['http://127.0.0.1:8080/logout', true],
    ['http://[::1]:8080/logout', true],
    ['http://IDP.internal/x', true],
    ['https://user:pw@idp.example.com/', false],
    ['https://user@idp.example.com/', false],
    ['https://idp.example.com/#frag', false],
    ['https://idp.example.com/#', false],
    ['ftp://idp.example.com/', false],
    ['javascript:alert(1)', false],
    ['/relative', false],
  ]
  for (const [url, ok] of cases) t.equal(outboundUrlAllowed(url, listed), ok, url)
})

t.test('checkOutbound: the URL rule, then every address public', async (t) => {
  t.equal((await checkOutbound('http://idp.example.com/', []))?.reason, 'scheme', 'http, unlisted')
  t.equal((await checkOutbound('not a url', []))?.reason, 'scheme', 'not a URL')
  t.equal((await checkOutbound('https://a:b@idp.example.com/', []))?.reason, 'credentials', 'userinfo')
  t.equal((await checkOutbound('https://127.0.0.1/', []))?.reason, 'private-address', 'loopback literal')
  t.equal((await checkOutbound('https://[::1]/', []))?.reason, 'private-address', 'IPv6 loopback literal')
  t.equal(
    (await checkOutbound('https://169.254.169.254/latest/meta-data', []))?.reason,
    'private-address',
    'cloud metadata',
  )
  t.equal(
    (await checkOutbound('https://0x7f.1/', []))?.reason,
    'private-address',
    'an inet_aton spelling of loopback, as the URL parser reads it',
  )
  t.equal(
    (await checkOutbound('https://localhost/', []))?.reason,
    'private-address',
    'localhost resolves to loopback',
  )
  t.equal(
    await checkOutbound('http://127.0.0.1:9/x', ['127.0.0.1']),
    null,
    'a listed host: http, any address',
  )
  t.equal(await checkOutbound('https://8.8.8.8/x', []), null, 'a public literal (checked, never fetched)')
})

t.test('checkOutbound: a name that does not resolve is unresolvable', { timeout: 15000 }, async (t) => {
  // RFC 6761: .invalid never resolves, and the resolver says so without asking the network.
  const refusal = await checkOutbound('https://no-such-host.invalid/', [])
  t.equal(refusal?.reason, 'unresolvable')
})

t.test('outboundFetch: a listed loopback server is reached', async (t) => {
  const srv = await loopbackServer(t)
  const res = await outboundFetch(['127.0.0.1'])(`${srv.origin}/ping`)
  t.equal(res.status, 200)
  t.equal(await res.text(), 'hello')
  t.same(srv.seen.requests, ['/ping'])
})

t.test('outboundFetch: the same server unlisted is refused before any connection', async (t) => {
  const srv = await loopbackServer(t)
  const send = outboundFetch([])
  t.equal(await rejectionReason(send(`${srv.origin}/ping`)), 'scheme', 'http on an unlisted host')
  const https = srv.origin.replace('http:', 'https:')
  t.equal(await rejectionReason(send(`${https}/ping`)), 'private-address', 'https to a loopback literal')
  t.equal(await rejectionReason(send(new URL(`${https}/ping`))), 'private-address', 'given as a URL')
  t.equal(await rejectionReason(send(new Request(`${https}/ping`))), 'private-address', 'given as a Request')
  t.equal(srv.seen.connections, 0, 'the server saw no connection')
})

t.test('outboundFetch: a name rebound to loopback between the check and the connection', async (t) => {
  // The resolver answers a public address to checkOutbound and loopback to the socket's own lookup; only the
  // name below is stood in for, and .invalid never resolves for real, so nothing can leave the machine.
  const srv = await loopbackServer(t)
  const name = 'rebind.invalid'
  const { lookup } = dns
  const promisesLookup = dns.promises.lookup
  t.teardown(() => {
    dns.lookup = lookup
    dns.promises.lookup = promisesLookup
  })
  let socketLookups = 0
  dns.promises.lookup = (async (host: string, options: dns.LookupAllOptions) =>
    host === name
      ? [{ address: '93.184.216.34', family: 4 }]
      : promisesLookup(host, options)) as typeof promisesLookup
  dns.lookup = ((host: string, options: dns.LookupAllOptions, cb: (...a: unknown[]) => void) => {
    if (host !== name) return lookup(host, options, cb)
    socketLookups++
    cb(null, [{ address: '127.0.0.1', family: 4 }])
  }) as typeof lookup
  const port = new URL(srv.origin).port
  t.equal(await checkOutbound(`https://${name}:${port}/`, []), null, 'the check saw a public address')
  const reason = await rejectionReason(outboundFetch([])(`https://${name}:${port}/`))
  t.equal(reason, 'private-address')
  t.equal(socketLookups, 1, 'the connection resolved the name again')
  t.equal(srv.seen.connections, 0, 'and never opened the socket')
})

t.test('outboundFetch: a redirect is returned as is, not followed', async (t) => {
  const srv = await loopbackServer(t, (req, res) => {
    if (req.url === '/start') res.writeHead(302, { location: '/elsewhere' }).end()
    else res.end('followed')
  })
  const res = await outboundFetch(['127.0.0.1'])(`${srv.origin}/start`, { redirect: 'follow' })
  t.equal(res.status, 302)
  t.equal(res.headers.get('location'), '/elsewhere')
  t.same(srv.seen.requests, ['/start'], 'the redirect target was never asked')
})

t.test('outboundFetch: the timeout fires against a server that never answers', async (t) => {
  const srv = await loopbackServer(t, () => {})
  const started = Date.now()
  const err = await outboundFetch(['127.0.0.1'], { timeoutMs: 200 })(`${srv.origin}/slow`).catch(
    (e: unknown) => e,
  )
  t.equal((err as Error).name, 'TimeoutError')
  t.ok(Date.now() - started < 5000, 'well before the default')
  t.same(srv.seen.requests, ['/slow'])
})

t.test("outboundFetch: the caller's own signal still aborts", async (t) => {
  const srv = await loopbackServer(t, () => {})
  const controller = new AbortController()
  const pending = outboundFetch(['127.0.0.1'])(`${srv.origin}/slow`, { signal: controller.signal })
  setTimeout(() => controller.abort(new Error('caller gave up')), 50)
  await t.rejects(pending, { message: 'caller gave up' })
})
