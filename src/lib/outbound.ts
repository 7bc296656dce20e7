// Where the service may connect (contract section 24, "Where the service may connect"): the one place the
// rule lives. A host listed in OUTBOUND_ALLOWED_HOSTS, as written in the URL, may use `http` and any address;
// every other endpoint must be `https` and resolve to public addresses only. Back-channel logout and the
// identity providers both go through here, so a URL refused at creation is refused at every later request.
import dns from 'node:dns'
import type { LookupFunction } from 'node:net'
import { isIP } from 'node:net'
import { Agent } from 'undici'
import { compileAllowlist, isValidCidr, normalizeIp } from './cidr.js'

/**
 * Why an URL is refused. `scheme` covers every refusal of the URL's form: not an absolute http(s) URL, a
 * fragment, or `http` on a host not listed.
 */
export type OutboundRefusal = {
  reason: 'scheme' | 'credentials' | 'private-address' | 'unresolvable'
  message: string
}

const DEFAULT_TIMEOUT_MS = 5000

// IANA's IPv4 special-purpose registry (RFC 6890 and its updates), whole blocks even where a few addresses
// are marked globally reachable (192.0.0.9, the AMT and AS112 anycasts): no identity provider or logout
// endpoint lives there, and a block is easier to audit than its exceptions. cidr.ts matches an IPv4-mapped
// IPv6 address against these too, so `::ffff:127.0.0.1` is loopback like `127.0.0.1`.
const SPECIAL_V4 = compileAllowlist([
  '0.0.0.0/8', // "this network"; 0.0.0.0 reaches the local host on Linux
  '10.0.0.0/8',
  '100.64.0.0/10', // carrier-grade NAT
  '127.0.0.0/8',
  '169.254.0.0/16', // link-local, where cloud metadata services answer
  '172.16.0.0/12',
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // TEST-NET-1
  '192.31.196.0/24', // AS112
  '192.52.193.0/24', // AMT
  '192.88.99.0/24', // 6to4 relay anycast
  '192.168.0.0/16',
  '192.175.48.0/24', // AS112 direct delegation
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // TEST-NET-2
  '203.0.113.0/24', // TEST-NET-3
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, with the limited broadcast 255.255.255.255
])

// Why IPv6 is an allow-list: IANA allocates global unicast from 2000::/3 only. Everything else (::, ::1,
// the deprecated IPv4-compatible ::/96, NAT64 64:ff9b::/96 which can reach a private IPv4 through a
// gateway, discard 100::/64, fc00::/7, fe80::/10, ff00::/8) is refused without a table of its own.
const GLOBAL_V6 = compileAllowlist(['2000::/3'])
const SPECIAL_V6 = compileAllowlist([
  '2001::/23', // IETF protocol assignments: Teredo (embeds an IPv4), benchmarking, ORCHID
  '2001:db8::/32', // documentation
  '2002::/16', // 6to4: embeds an IPv4, private ones included
  '2620:4f:8000::/48', // AS112 direct delegation
  '3fff::/20', // documentation (RFC 9637)
])

/** True for an address that is public: none of the special-use IPv4 blocks, IPv6 only in global unicast. */
export function isPublicAddress(address: string): boolean {
  // A zone id only ever qualifies a link-local or other scoped address; refusing it keeps the parse strict.
  if (address.includes('%') || address.includes('/')) return false
  const canonical = normalizeIp(address)
  if (!isValidCidr(canonical)) return false
  if (!canonical.includes(':')) return !SPECIAL_V4(canonical)
  return GLOBAL_V6(canonical) && !SPECIAL_V6(canonical)
}

/** The parsed URL and its host as OUTBOUND_ALLOWED_HOSTS spells hosts (lower case, IPv6 without brackets). */
function parse(raw: string): { url: URL; host: string } | null {
  const url = URL.parse(raw)
  return url && { url, host: url.hostname.toLowerCase().replace(/^\[|\]$/g, '') }
}

/** The refusal of the URL's form, or null; no DNS. */
function urlRefusal(raw: string, allowedHosts: readonly string[]): OutboundRefusal | null {
  const parsed = parse(raw)
  if (!parsed || (parsed.url.protocol !== 'https:' && parsed.url.protocol !== 'http:'))
    return { reason: 'scheme', message: 'must be an absolute https URL' }
  const { url, host } = parsed
  if (url.username || url.password) return { reason: 'credentials', message: 'must not carry credentials' }
  // Why the raw text: URL's `hash` is empty for a bare trailing `#`, which is a fragment all the same.
  if (raw.includes('#')) return { reason: 'scheme', message: 'must not have a fragment' }
  if (url.protocol === 'http:' && !allowedHosts.includes(host))
    return { reason: 'scheme', message: 'must be https, or http on a host of OUTBOUND_ALLOWED_HOSTS' }
  return null
}

/** Syntax-only: https, or http(s) on a listed host; no userinfo, no fragment. */
export function outboundUrlAllowed(raw: string, allowedHosts: readonly string[]): boolean {
  return urlRefusal(raw, allowedHosts) === null
}

const privateAddress = (host: string): OutboundRefusal => ({
  reason: 'private-address',
  message: `${host} is not a public address`,
})

/** The full check before a connection: the URL rule, then, for a host not listed, every address public. */
export async function checkOutbound(
  raw: string,
  allowedHosts: readonly string[],
): Promise<OutboundRefusal | null> {
  const refusal = urlRefusal(raw, allowedHosts)
  if (refusal) return refusal
  const { host } = parse(raw)!
  if (allowedHosts.includes(host)) return null
  if (isIP(host) !== 0) return isPublicAddress(host) ? null : privateAddress(host)
  let addresses: dns.LookupAddress[]
  try {
    // Through the module object, not a named import, so a test can stand in for the resolver.
    addresses = await dns.promises.lookup(host, { all: true })
  } catch {
    return { reason: 'unresolvable', message: `${host} does not resolve` }
  }
  if (addresses.length === 0) return { reason: 'unresolvable', message: `${host} does not resolve` }
  return addresses.every((a) => isPublicAddress(a.address)) ? null : privateAddress(host)
}

/** Marks a connection the guarded lookup refused, so outboundFetch can report it as `private-address`. */
class RefusedAddress extends Error {
  readonly code = 'EOUTBOUNDREFUSED'
}

/**
 * The resolver of the guarded Agent. Why again, after checkOutbound: the name may resolve differently by the
 * time the socket opens (DNS rebinding), and this is the answer the socket actually uses.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '')
    if (addresses.length === 0 || !addresses.every((a) => isPublicAddress(a.address)))
      return callback(new RefusedAddress(`${hostname} is not a public address`), '')
    // net asks for every address when it races the families (autoSelectFamily), otherwise for one.
    if (options.all) return callback(null, addresses)
    const [first] = addresses
    callback(null, first!.address, first!.family)
  })
}

// One Agent for the process: the lookup does not depend on the allowed hosts, and one pool keeps sockets to
// a provider alive across the tenants that use it. Created on first use, so importing this opens nothing.
let guardedAgent: Agent | undefined
const guarded = () => (guardedAgent ??= new Agent({ connect: { lookup: publicOnlyLookup } }))

/** `promise`, or the signal's reason once it aborts first (a resolver has no timeout of its own). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error)
    signal.addEventListener('abort', onAbort, { once: true })
    void promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

const refused = (r: OutboundRefusal) => new Error(r.message, { cause: { reason: r.reason } })

/** A fetch for outbound requests: checked by checkOutbound, guarded against rebinding, timed out, no redirects. */
export function outboundFetch(
  allowedHosts: readonly string[],
  opts: { timeoutMs?: number } = {},
): typeof fetch {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS
  return async (input, init) => {
    const timeout = AbortSignal.timeout(timeoutMs)
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout
    const raw = input instanceof Request ? input.url : String(input)
    const refusal = await untilAborted(checkOutbound(raw, allowedHosts), signal)
    if (refusal) throw refused(refusal)
    // A listed host may be reached at any address, so it keeps the caller's dispatcher (or the global one).
    // Redirects are never followed: the target of one has passed none of the checks above.
    // Node's fetch takes undici's `dispatcher` option, which the DOM's RequestInit does not declare.
    const options: RequestInit & { dispatcher?: Agent } = { ...init, signal, redirect: 'manual' }
    if (!allowedHosts.includes(parse(raw)!.host)) options.dispatcher = guarded()
    try {
      return await fetch(input, options)
    } catch (err) {
      if (err instanceof Error && err.cause instanceof RefusedAddress)
        throw refused({ reason: 'private-address', message: err.cause.message })
      throw err
    }
  }
}
