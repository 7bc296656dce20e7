import { AppError } from '../../errors.js'
import type { OAuthConfig } from '../../security/auth-config.js'
import { isLoopbackHost } from './uris.js'

// The rules on a tenant's resources (contract section 23, "Resources"; RFC 8707): an indicator is an
// absolute URI that the token's `aud` carries byte for byte, so it is checked as written, never normalized.

/** Why a resource indicator is refused, or null when it is acceptable. */
function indicatorProblem(raw: string): string | null {
  if (raw.includes('#')) return 'must not have a fragment'
  const u = URL.parse(raw)
  if (!u || !u.hostname) return 'must be an absolute URI'
  if (u.username || u.password) return 'must not carry credentials'
  if (u.protocol === 'https:') return null
  if (u.protocol === 'http:' && isLoopbackHost(u.hostname)) return null
  return 'must be https, or http on a loopback host'
}

/** Refuses an `auth_config.oauth` whose resources break the rules: 400 VALIDATION_ERROR naming each field. */
export function assertOAuthConfig(cfg: OAuthConfig, at: string): void {
  const issues: { path: string; message: string }[] = []
  const seen = new Set<string>()
  cfg.resources.forEach((r, i) => {
    const path = `${at}.oauth.resources.${i}.indicator`
    const problem = indicatorProblem(r.indicator)
    if (problem) issues.push({ path, message: problem })
    else if (seen.has(r.indicator)) issues.push({ path, message: 'repeats another resource' })
    seen.add(r.indicator)
  })
  if (issues.length > 0) throw new AppError('VALIDATION_ERROR', 'Request validation failed', issues)
}

/** The tenant's resource named by an indicator, compared exactly; undefined for an unknown one. */
export function resourceOf(cfg: OAuthConfig, indicator: string) {
  return cfg.resources.find((r) => r.indicator === indicator)
}
