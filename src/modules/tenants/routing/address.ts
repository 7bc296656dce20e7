import dns from 'node:dns'
import net from 'node:net'

// Where a routed database may be: with DATABASE_ROUTING_ALLOWED_HOSTS unset, anywhere but this server
// and its link (loopback, link-local, unspecified). The check runs on the resolved addresses, inside the
// socket's own lookup, so the address checked is the address connected to: a name that resolves to a
// public address when checked and to 127.0.0.1 a moment later (DNS rebinding) gets no connection.

const FORBIDDEN = new net.BlockList()
FORBIDDEN.addSubnet('127.0.0.0', 8, 'ipv4') // loopback
FORBIDDEN.addSubnet('169.254.0.0', 16, 'ipv4') // link-local (cloud metadata services live here)
FORBIDDEN.addSubnet('0.0.0.0', 8, 'ipv4') // "this network": 0.0.0.0 reaches the local host
FORBIDDEN.addAddress('::', 'ipv6')
FORBIDDEN.addAddress('::1', 'ipv6')
FORBIDDEN.addSubnet('fe80::', 10, 'ipv6')
// Why: the deprecated IPv4-compatible forms (::127.0.0.1); the IPv4-mapped ones (::ffff:127.0.0.1) are
// matched by the IPv4 rules above, which BlockList applies to them.
FORBIDDEN.addSubnet('::7f00:0', 104, 'ipv6')
FORBIDDEN.addSubnet('::a9fe:0', 112, 'ipv6')
FORBIDDEN.addSubnet('::', 104, 'ipv6')

/** True for a loopback, link-local or unspecified address, in IPv4, IPv6 or IPv4-mapped form. */
export function isForbiddenAddress(address: string): boolean {
  const family = net.isIP(address)
  if (family === 0) return true
  return FORBIDDEN.check(address, family === 6 ? 'ipv6' : 'ipv4')
}

/** A routed host resolved to an address this service must not connect to. */
export class ForbiddenAddressError extends Error {
  readonly code = 'EROUTINGADDRESS'
  constructor() {
    super('the database host resolves to a loopback, link-local or unspecified address')
    this.name = 'ForbiddenAddressError'
  }
}

/** Every address of a host name, as dns.lookup gives them (hosts file, then DNS). */
export type Resolver = (host: string) => Promise<dns.LookupAddress[]>

export const systemResolver: Resolver = (host) => dns.promises.lookup(host, { all: true, verbatim: true })

/**
 * Resolves `host` (an IP literal resolves to itself) and throws ForbiddenAddressError when any of its
 * addresses is forbidden; DNS errors propagate.
 */
export async function resolveAllowedAddresses(
  host: string,
  resolve: Resolver = systemResolver,
): Promise<dns.LookupAddress[]> {
  const addresses = net.isIP(host) ? [{ address: host, family: net.isIP(host) }] : await resolve(host)
  if (addresses.length === 0 || addresses.some((a) => isForbiddenAddress(a.address)))
    throw new ForbiddenAddressError()
  return addresses
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void

/**
 * A `lookup` for net.connect that answers only with checked addresses: any forbidden one among a host's
 * addresses fails the connection (ForbiddenAddressError).
 */
export function checkedLookup(resolve: Resolver = systemResolver) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    resolveAllowedAddresses(hostname, resolve).then(
      (all) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0
        const usable = wanted === 0 ? all : all.filter((a) => a.family === wanted)
        const [first] = usable
        if (!first) {
          const err: NodeJS.ErrnoException = new Error(`no IPv${wanted} address for the database host`)
          err.code = 'ENOTFOUND'
          return callback(err, '')
        }
        if (options.all) callback(null, usable)
        else callback(null, first.address, first.family)
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    )
  }
}

/**
 * A socket for node-postgres (its `stream` option) whose connect goes only to checked addresses: names
 * through checkedLookup, IP literals (which net.connect never looks up) checked directly.
 */
export function checkedSocket(resolve: Resolver = systemResolver): net.Socket {
  const socket = new net.Socket()
  const lookup = checkedLookup(resolve)
  const connect = socket.connect.bind(socket) as (options: net.TcpSocketConnectOpts) => net.Socket
  // pg calls connect(port, host) and listens for 'connect' and 'error' right after.
  const checkedConnect = (port: number, host: string): net.Socket => {
    if (net.isIP(host) !== 0 && isForbiddenAddress(host)) {
      process.nextTick(() => socket.destroy(new ForbiddenAddressError()))
      return socket
    }
    return connect({ port, host, lookup })
  }
  socket.connect = checkedConnect as unknown as net.Socket['connect']
  return socket
}
