import { getDomain } from 'tldts'
import type { TenantInfo } from '../../context.js'
import { fail } from '../../errors.js'
import type { WebauthnConfig } from '../../security/auth-config.js'

// Why the private suffixes too: `github.io` is nobody's registrable domain; a passkey bound to it would
// be usable by every site under it.
const PSL = { allowPrivateDomains: true }

/** The problem with a `webauthn` config, as a field and a message; null when it is acceptable. */
export function webauthnConfigProblem(cfg: WebauthnConfig): { field: string; message: string } | null {
  const rpId = cfg.rpId
  const local = rpId === 'localhost'
  if (!local && getDomain(rpId, PSL) === null) {
    return {
      field: 'rpId',
      message: 'must be a registrable domain (not a public suffix or an address) or localhost',
    }
  }
  for (const [i, origin] of cfg.origins.entries()) {
    const field = `origins.${i}`
    let u: URL
    try {
      u = new URL(origin)
    } catch {
      return { field, message: 'must be an origin' }
    }
    // Exact: what a browser writes into clientDataJSON, byte for byte (no path, no default port, lower case).
    if (u.origin !== origin) return { field, message: 'must be an exact origin (scheme, host, port only)' }
    const host = u.hostname
    if (u.protocol !== 'https:' && !(u.protocol === 'http:' && host === 'localhost')) {
      return { field, message: 'must be https:// (or http://localhost)' }
    }
    const under = local ? host === 'localhost' : host === rpId || host.endsWith(`.${rpId}`)
    if (!under) return { field, message: `its host must be ${rpId} or under it` }
  }
  return null
}

/** Refuses an `auth_config` whose `webauthn` is not acceptable: 400 VALIDATION_ERROR naming the field. */
export function assertWebauthnConfig(cfg: WebauthnConfig | null, at: string): void {
  if (cfg === null) return
  const problem = webauthnConfigProblem(cfg)
  if (problem) {
    fail('VALIDATION_ERROR', undefined, [
      { path: `${at}.webauthn.${problem.field}`, message: problem.message },
    ])
  }
}

/** The tenant's passkey settings, with rpName resolved; 409 PASSKEYS_DISABLED while they are off. */
export function webauthnOf(tenant: TenantInfo): Required<WebauthnConfig> {
  const cfg = tenant.authConfig.webauthn ?? fail('PASSKEYS_DISABLED')
  return { rpId: cfg.rpId, rpName: cfg.rpName ?? tenant.name, origins: cfg.origins }
}
