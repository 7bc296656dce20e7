import { fail } from '../../errors.js'

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i

/**
 * Whether a link template is acceptable: absolute https://, or http:// on a loopback host (a developer's
 * own machine), with `{token}` in it. Why not any http: the link carries a live token.
 */
export function linkTemplateAcceptable(template: string): boolean {
  if (!template.includes('{token}')) return false
  let u: URL
  try {
    // Why the placeholders are replaced first: braces are not valid in every part of a URL.
    u = new URL(template.replaceAll('{token}', 'x').replaceAll('{tenantCode}', 'x'))
  } catch {
    return false
  }
  if (u.username || u.password) return false
  if (u.protocol === 'https:') return true
  return u.protocol === 'http:' && LOOPBACK.test(u.hostname)
}

/** Refuses an `auth_config.email` patch whose links are not acceptable: 400 VALIDATION_ERROR naming the field. */
export function assertEmailConfigPatch(patch: unknown, at = 'body'): void {
  if (typeof patch !== 'object' || patch === null) return
  const email = (patch as { email?: unknown }).email
  if (typeof email !== 'object' || email === null) return
  for (const field of ['resetUrl', 'verifyUrl'] as const) {
    const v = (email as Record<string, unknown>)[field]
    if (typeof v === 'string' && !linkTemplateAcceptable(v)) {
      fail('VALIDATION_ERROR', undefined, [
        {
          path: `${at}.email.${field}`,
          message: 'must be an https:// URL (or http:// on a loopback host) containing {token}',
        },
      ])
    }
  }
}

/** The link of a message: the tenant's template, else the console's page under PUBLIC_URL. */
export function linkFor(
  template: string | null,
  page: 'reset-password' | 'verify-email',
  p: { publicUrl: string; tenantCode: string; token: string },
): string {
  const t = template ?? `${p.publicUrl}/console/${page}?tenant={tenantCode}&token={token}`
  // Why encode: the tenant code and token are URL-safe already, but a template is not ours to trust.
  return t
    .replaceAll('{tenantCode}', encodeURIComponent(p.tenantCode))
    .replaceAll('{token}', encodeURIComponent(p.token))
}
