// One address space for matching: every IPv4 address is treated as its IPv4-mapped IPv6 form
// (::ffff:a.b.c.d) and an IPv4 CIDR a.b.c.d/n as ::ffff:a.b.c.d/(96+n). So `::ffff:203.0.113.5` and
// `203.0.113.5` are the same address whichever side (request or list) uses which spelling (a Client
// Key's `ipAllowlist`, openapi/components/client-keys.yaml). A consequence, intended: an IPv6 entry
// that covers ::ffff:0:0/96 (e.g. `::/0`) matches IPv4 clients too, exactly as it would match their
// mapped socket address on a dual-stack listener.
//
// ipaddr.js parses, matches prefixes and writes RFC 5952 text. In front of it sits a strict door,
// because ipaddr.js also reads inet_aton spellings (`10.1`, `010.0.0.1`, `0xa.0.0.1`), loose dotted
// tails (`::ffff:01.2.3.4`), leading zeros in a prefix (`/08`) and zone ids in a CIDR, and it reads
// the IPv4-compatible `::a.b.c.d` as IPv4-mapped. The door is the same set of forms as before the switch.
import ipaddr from 'ipaddr.js'

type IPv4 = ipaddr.IPv4
type IPv6 = ipaddr.IPv6

/** A parsed CIDR block. IPv4-mapped IPv6 blocks of prefix >= 96 are reported as the IPv4 block they are. */
export interface Cidr {
  family: 4 | 6
  /** Prefix length in the block's own family (0..32 or 0..128). */
  prefix: number
  /** Network address with host bits cleared, plus `/prefix`, e.g. `10.0.0.0/8`, `2001:db8::/32`. */
  canonical: string
}

/** A compiled membership test; see compileAllowlist. */
export type IpMatcher = (ip: string) => boolean

/** A network in the one (IPv6) address space: the address and its prefix length of 0..128. */
type Net = [IPv6, number]

const V4_RE = /^(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})$/
const PREFIX_RE = /^(0|[1-9][0-9]{0,2})$/
// Longest textual IPv6 address (45) plus `/128`; anything longer is not a CIDR and not worth parsing.
const MAX_CIDR_LENGTH = 49

/**
 * Parses `a.b.c.d/n` or `ipv6/n`; a bare address is /32 or /128. Host bits may be set (`10.1.2.3/8`
 * means `10.0.0.0/8`; `canonical` shows the cleared form). Strict: no spaces, zone ids, leading zeros
 * in IPv4 octets or prefixes. Returns null when invalid.
 */
export function parseCidr(s: string): Cidr | null {
  const net = parseNet(s)
  if (net === null) return null
  const [addr, prefix128] = net
  const mask = ipaddr.IPv6.subnetMaskFromPrefixLength(prefix128).parts
  const network = new ipaddr.IPv6(addr.parts.map((p, i) => p & (mask[i] ?? 0)))
  if (prefix128 >= 96 && isMapped(network)) {
    return { family: 4, prefix: prefix128 - 96, canonical: `${unmap(network)}/${prefix128 - 96}` }
  }
  return { family: 6, prefix: prefix128, canonical: `${network.toRFC5952String()}/${prefix128}` }
}

/** True when `s` is a CIDR (or bare address) that parseCidr accepts. */
export function isValidCidr(s: string): boolean {
  return parseNet(s) !== null
}

/**
 * Canonical text of an address for rate-limit buckets and audit rows: an IPv4-mapped IPv6 address
 * becomes its plain IPv4, other IPv6 addresses their RFC 5952 form (lowercase, zeros compressed), and any
 * zone id (`%eth0`) is dropped. Input that is not an address comes back unchanged.
 */
export function normalizeIp(ip: string): string {
  const v4 = plainV4(ip)
  if (v4 !== null) return v4
  const v6 = parseV6Address(ip)
  if (v6 === null) return ip
  return isMapped(v6) ? unmap(v6) : v6.toRFC5952String()
}

/**
 * The subject of an address's rate-limit budget: an IPv4 address (plain or IPv4-mapped) is its own
 * subject; an IPv6 address stands for its /64 (`2001:db8:1:2::/64`), because one host is routinely given
 * a whole /64 and could otherwise take a fresh budget per address. Input that is not an address comes
 * back unchanged.
 */
export function rateLimitSubject(ip: string): string {
  const v4 = plainV4(ip)
  if (v4 !== null) return v4
  const v6 = parseV6Address(ip)
  if (v6 === null) return ip
  if (isMapped(v6)) return unmap(v6)
  const p = v6.parts
  return `${new ipaddr.IPv6([p[0] ?? 0, p[1] ?? 0, p[2] ?? 0, p[3] ?? 0, 0, 0, 0, 0]).toRFC5952String()}/64`
}

/**
 * True when `ip` lies in any of `cidrs` (IPv4 and its mapped IPv6 form are one address). Plain
 * membership: false for an empty list, an invalid ip, or entries that do not parse.
 */
export function ipInCidrList(ip: string, cidrs: readonly string[]): boolean {
  return matchNets(compileNets(cidrs), ip)
}

/**
 * Compiles a Client Key's `ipAllowlist` once, so the hot path does not reparse it. An empty list
 * allows every address (`ipAllowlist`: empty = any). Invalid entries match nothing, so a corrupt
 * list can only narrow access, never widen it; an invalid request ip is refused.
 */
export function compileAllowlist(cidrs: readonly string[]): IpMatcher {
  if (cidrs.length === 0) return () => true
  const nets = compileNets(cidrs)
  return (ip) => matchNets(nets, ip)
}

function compileNets(cidrs: readonly string[]): Net[] {
  const nets: Net[] = []
  for (const c of cidrs) {
    const n = parseNet(c)
    if (n !== null) nets.push(n)
  }
  return nets
}

function matchNets(nets: readonly Net[], ip: string): boolean {
  if (nets.length === 0) return false
  const addr = parseAddress(ip)
  return addr !== null && nets.some((net) => addr.match(net))
}

/** The address and prefix of a CIDR in the 128-bit space (IPv4 mapped); null when invalid. */
function parseNet(s: string): Net | null {
  if (s.length === 0 || s.length > MAX_CIDR_LENGTH || s.includes('%')) return null
  const slash = s.indexOf('/')
  const text = slash < 0 ? s : s.slice(0, slash)
  const v4 = parseV4(text)
  const addr = v4 !== null ? mapV4(v4) : parseV6(text)
  if (addr === null) return null
  if (slash < 0) return [addr, 128]
  const prefix = parsePrefix(s.slice(slash + 1), v4 !== null ? 32 : 128)
  if (prefix === null) return null
  return [addr, v4 !== null ? 96 + prefix : prefix]
}

function parsePrefix(s: string, max: number): number | null {
  if (!PREFIX_RE.test(s)) return null
  const p = Number(s)
  return p <= max ? p : null
}

/** An address (IPv4 mapped into IPv6, or IPv6 with an optional zone id that is ignored); null if invalid. */
function parseAddress(ip: string): IPv6 | null {
  const v4 = parseV4(dropMappedPrefix(ip))
  return v4 !== null ? mapV4(v4) : parseV6Address(ip)
}

/** An IPv6 address with an optional zone id, which is dropped. */
function parseV6Address(ip: string): IPv6 | null {
  if (ip.length > 64) return null
  const zone = ip.indexOf('%')
  return parseV6(zone < 0 ? ip : ip.slice(0, zone))
}

/** Four decimal octets without leading zeros, nothing else. */
function parseV4(s: string): IPv4 | null {
  const m = V4_RE.exec(s)
  if (m === null) return null
  const octets = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])]
  return octets.every((o) => o <= 255) ? new ipaddr.IPv4(octets) : null
}

/**
 * The plain IPv4 text of `ip` when it is a dotted quad or one behind `::ffff:`, else null. Why: these
 * are the per-request cases (a dual-stack listener reports every IPv4 client as `::ffff:a.b.c.d`), and
 * a strict dotted quad is already canonical: ~0.2 µs here, against ~0.5 µs (IPv4) and ~2 µs (mapped)
 * through ipaddr.js's own parse and unmapping.
 */
function plainV4(ip: string): string | null {
  const v4 = dropMappedPrefix(ip)
  return parseV4(v4) !== null ? v4 : null
}

const dropMappedPrefix = (ip: string) => (ip.startsWith('::ffff:') ? ip.slice(7) : ip)

/** RFC 4291 text forms; a dotted tail must pass parseV4 and is read as two groups, as written. */
function parseV6(s: string): IPv6 | null {
  if (s.length < 2 || s.length > 45) return null
  const lastColon = s.lastIndexOf(':')
  if (lastColon < 0) return null
  let text = s
  if (s.includes('.', lastColon)) {
    const v4 = parseV4(s.slice(lastColon + 1))
    if (v4 === null) return null
    const [a = 0, b = 0, c = 0, d = 0] = v4.octets
    text = `${s.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  try {
    return ipaddr.IPv6.parse(text)
  } catch {
    return null
  }
}

// Why by hand: ipaddr.js's toIPv4MappedAddress() reparses text, and isIPv4MappedAddress() walks every
// special range; on the per-request path these three lines are much cheaper.
function mapV4(v4: IPv4): IPv6 {
  const [a = 0, b = 0, c = 0, d = 0] = v4.octets
  return new ipaddr.IPv6([0, 0, 0, 0, 0, 0xffff, (a << 8) | b, (c << 8) | d])
}

function isMapped(v6: IPv6): boolean {
  const p = v6.parts
  return p[0] === 0 && p[1] === 0 && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0xffff
}

/** The dotted IPv4 of a mapped address. */
function unmap(v6: IPv6): string {
  const hi = v6.parts[6] ?? 0
  const lo = v6.parts[7] ?? 0
  return `${hi >>> 8}.${hi & 255}.${lo >>> 8}.${lo & 255}`
}
