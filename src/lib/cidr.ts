// One address space for matching: every IPv4 address is treated as its IPv4-mapped IPv6 form
// (::ffff:a.b.c.d) and an IPv4 CIDR a.b.c.d/n as ::ffff:a.b.c.d/(96+n). So `::ffff:203.0.113.5` and
// `203.0.113.5` are the same address whichever side (request or list) uses which spelling (contract
// section 8). A consequence, intended: an IPv6 entry that covers ::ffff:0:0/96 (e.g. `::/0`) matches
// IPv4 clients too, exactly as it would match their mapped socket address on a dual-stack listener.
//
// Own parser instead of node:net BlockList: we need the mapped/unmapped equivalence in both directions,
// a canonical form to store, and a matcher that is a few integer compares on the hot path.

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

interface Net {
  words: Int32Array
  mask: Int32Array
}

const V4_RE = /^(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})$/
const HEX_GROUP_RE = /^[0-9a-fA-F]{1,4}$/
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
  const { words, prefix128 } = net
  if (prefix128 >= 96 && isMappedWords(words)) {
    return { family: 4, prefix: prefix128 - 96, canonical: `${formatIPv4(words[3])}/${prefix128 - 96}` }
  }
  return { family: 6, prefix: prefix128, canonical: `${formatIPv6(wordsToGroups(words))}/${prefix128}` }
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
  const words = parseAddressWords(ip)
  if (words === null) return ip
  return isMappedWords(words) ? formatIPv4(words[3]) : formatIPv6(wordsToGroups(words))
}

/**
 * The subject of an address's rate-limit budget: an IPv4 address (plain or IPv4-mapped) is its own
 * subject; an IPv6 address stands for its /64 (`2001:db8:1:2::/64`), because one host is routinely given
 * a whole /64 and could otherwise take a fresh budget per address. Input that is not an address comes
 * back unchanged.
 */
export function rateLimitSubject(ip: string): string {
  const w = parseAddressWords(ip)
  if (w === null) return ip
  if (isMappedWords(w)) return formatIPv4(w[3])
  return `${formatIPv6(wordsToGroups(Int32Array.of(w[0], w[1], 0, 0)))}/64`
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
 * allows every address (contract section 8: empty = any). Invalid entries match nothing, so a corrupt
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
    if (n !== null) nets.push({ words: n.words, mask: maskWords(n.prefix128) })
  }
  return nets
}

function matchNets(nets: readonly Net[], ip: string): boolean {
  if (nets.length === 0) return false
  const w = parseAddressWords(ip)
  if (w === null) return false
  for (const { words, mask } of nets) {
    if (
      (w[0] & mask[0]) === words[0] &&
      (w[1] & mask[1]) === words[1] &&
      (w[2] & mask[2]) === words[2] &&
      (w[3] & mask[3]) === words[3]
    ) {
      return true
    }
  }
  return false
}

/** Network words (host bits cleared) and the prefix in the 128-bit space; null when invalid. */
function parseNet(s: string): { words: Int32Array; prefix128: number } | null {
  if (s.length === 0 || s.length > MAX_CIDR_LENGTH || s.includes('%')) return null
  const slash = s.indexOf('/')
  const addr = slash < 0 ? s : s.slice(0, slash)
  const v4 = parseIPv4(addr)
  let words: Int32Array
  let prefix128: number
  if (v4 !== null) {
    words = v4Words(v4)
    prefix128 = 128
    if (slash >= 0) {
      const p = parsePrefix(s.slice(slash + 1), 32)
      if (p === null) return null
      prefix128 = 96 + p
    }
  } else {
    const groups = parseIPv6(addr)
    if (groups === null) return null
    words = groupsToWords(groups)
    prefix128 = 128
    if (slash >= 0) {
      const p = parsePrefix(s.slice(slash + 1), 128)
      if (p === null) return null
      prefix128 = p
    }
  }
  const mask = maskWords(prefix128)
  for (let i = 0; i < 4; i++) words[i] &= mask[i]
  return { words, prefix128 }
}

function parsePrefix(s: string, max: number): number | null {
  if (!PREFIX_RE.test(s)) return null
  const p = Number(s)
  return p <= max ? p : null
}

/** An address (IPv4, or IPv6 with an optional zone id that is ignored) as four 32-bit words. */
function parseAddressWords(ip: string): Int32Array | null {
  if (ip.length === 0 || ip.length > 64) return null
  const v4 = parseIPv4(ip)
  if (v4 !== null) return v4Words(v4)
  const zone = ip.indexOf('%')
  const groups = parseIPv6(zone < 0 ? ip : ip.slice(0, zone))
  return groups === null ? null : groupsToWords(groups)
}

function parseIPv4(s: string): number | null {
  const m = V4_RE.exec(s)
  if (m === null) return null
  let n = 0
  for (let i = 1; i <= 4; i++) {
    const octet = Number(m[i])
    if (octet > 255) return null
    n = n * 256 + octet
  }
  return n
}

/** The eight 16-bit groups of an IPv6 address (RFC 4291 text forms, IPv4 tail allowed); null if invalid. */
function parseIPv6(s: string): number[] | null {
  if (s.length < 2 || s.length > 45) return null
  let text = s
  const lastColon = s.lastIndexOf(':')
  if (lastColon < 0) return null
  const tail = s.slice(lastColon + 1)
  if (tail.includes('.')) {
    const v4 = parseIPv4(tail)
    if (v4 === null) return null
    text = s.slice(0, lastColon + 1) + (v4 >>> 16).toString(16) + ':' + (v4 & 0xffff).toString(16)
  }
  const dbl = text.indexOf('::')
  if (dbl !== text.lastIndexOf('::')) return null
  let head: string[]
  let rest: string[] = []
  if (dbl >= 0) {
    const h = text.slice(0, dbl)
    const t = text.slice(dbl + 2)
    head = h === '' ? [] : h.split(':')
    rest = t === '' ? [] : t.split(':')
    if (head.length + rest.length > 7) return null
  } else {
    head = text.split(':')
    if (head.length !== 8) return null
  }
  const groups: number[] = []
  for (const g of head) {
    if (!HEX_GROUP_RE.test(g)) return null
    groups.push(parseInt(g, 16))
  }
  while (groups.length < 8 - rest.length) groups.push(0)
  for (const g of rest) {
    if (!HEX_GROUP_RE.test(g)) return null
    groups.push(parseInt(g, 16))
  }
  return groups
}

function v4Words(v4: number): Int32Array {
  return Int32Array.of(0, 0, 0xffff, v4 | 0)
}

function groupsToWords(g: number[]): Int32Array {
  return Int32Array.of((g[0] << 16) | g[1], (g[2] << 16) | g[3], (g[4] << 16) | g[5], (g[6] << 16) | g[7])
}

function wordsToGroups(w: Int32Array): number[] {
  const g: number[] = []
  for (let i = 0; i < 4; i++) g.push((w[i] >>> 16) & 0xffff, w[i] & 0xffff)
  return g
}

function isMappedWords(w: Int32Array): boolean {
  return w[0] === 0 && w[1] === 0 && w[2] === 0xffff
}

function maskWords(prefix128: number): Int32Array {
  const m = new Int32Array(4)
  for (let i = 0; i < 4; i++) {
    const bits = Math.min(32, Math.max(0, prefix128 - 32 * i))
    m[i] = bits === 0 ? 0 : bits === 32 ? -1 : -1 << (32 - bits)
  }
  return m
}

function formatIPv4(word: number): string {
  return `${(word >>> 24) & 255}.${(word >>> 16) & 255}.${(word >>> 8) & 255}.${word & 255}`
}

/** RFC 5952: lowercase hex, no leading zeros, the first longest run of two or more zero groups as `::`. */
function formatIPv6(g: number[]): string {
  let bestStart = -1
  let bestLen = 0
  for (let i = 0; i < 8;) {
    if (g[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && g[j] === 0) j++
    if (j - i > bestLen) {
      bestStart = i
      bestLen = j - i
    }
    i = j
  }
  const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(':')
  if (bestLen < 2) return hex(g)
  return `${hex(g.slice(0, bestStart))}::${hex(g.slice(bestStart + bestLen))}`
}
