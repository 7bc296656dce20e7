import { AppError } from '../../errors.js'
import { outboundUrlAllowed } from '../../lib/outbound.js'

// The rules on an OAuth client's URIs (contract section 23, "Applications"): exact redirect URIs, and where
// the service itself may connect (a back-channel logout URI, section 24's OUTBOUND_ALLOWED_HOSTS).

type Issue = { path: string; message: string }

/** True for a host a browser and RFC 8252 treat as this machine. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase()
  return h === 'localhost' || /^127(\.\d{1,3}){3}$/.test(h) || h === '[::1]'
}

// Why these are never a redirect target: they run code or read files in the browser, not an application.
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'blob:', 'about:'])

/** Why a redirect URI is refused, or null when it is acceptable for a client of this type. */
function redirectUriProblem(raw: string, type: 'confidential' | 'public'): string | null {
  if (raw.includes('#')) return 'must not have a fragment'
  if (raw.includes('*')) return 'must not have a wildcard'
  const u = URL.parse(raw)
  if (!u) return 'is not an absolute URI'
  if (u.username || u.password) return 'must not carry credentials'
  if (u.protocol === 'https:') return u.hostname ? null : 'has no host'
  if (u.protocol === 'http:')
    return isLoopbackHost(u.hostname) ? null : 'must be https, or http on a loopback host'
  if (FORBIDDEN_SCHEMES.has(u.protocol)) return 'has a scheme that is never a redirect target'
  return type === 'public' ? null : 'a private-use scheme is for a public client only'
}

/** VALIDATION_ERROR naming each redirect URI that breaks the rules; the URIs as given otherwise. */
export function checkRedirectUris(
  list: readonly string[],
  type: 'confidential' | 'public',
  field: string,
): string[] {
  const issues: Issue[] = []
  list.forEach((uri, i) => {
    const problem = redirectUriProblem(uri, type)
    if (problem) issues.push({ path: `body.${field}.${i}`, message: problem })
  })
  if (issues.length > 0) throw new AppError('VALIDATION_ERROR', 'Request validation failed', issues)
  return [...list]
}

/** True when the service may connect to this URL by its form (the rule is src/lib/outbound.ts's). */
export function outboundAllowed(raw: string, allowedHosts: readonly string[]): boolean {
  return outboundUrlAllowed(raw, allowedHosts)
}

/** VALIDATION_ERROR when a URI shown to people (logo, home page) is not https or loopback http. */
export function checkShownUri(raw: string | null | undefined, field: string): void {
  if (raw === null || raw === undefined) return
  const u = URL.parse(raw)
  const ok = u && (u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackHost(u.hostname)))
  if (!ok || u.username || u.password)
    throw new AppError('VALIDATION_ERROR', 'Request validation failed', [
      { path: `body.${field}`, message: 'must be https, or http on a loopback host' },
    ])
}
