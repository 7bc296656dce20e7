import { useEffect } from 'react'
import { useQuery } from '@tanstack/react-query'
import { tessera } from '../api'
import { textOn } from '../lib/contrast'
import { TENANT_CODE } from '../lib/tenant-code'
import { useDebounced } from '../ui/useDebounced'
import { t } from '../i18n'

/** How long the Tenant field rests before its branding is asked for (as its providers are). */
const DEBOUNCE_MS = 400

/** A tenant's branding for its public pages (GET /login/branding); null while unknown or for a bad code. */
function useBranding(tenantCode: string | undefined) {
  const code = useDebounced((tenantCode ?? '').trim(), DEBOUNCE_MS)
  const valid = TENANT_CODE.test(code)
  const branding = useQuery({
    queryKey: ['login-branding', code.toLowerCase()],
    queryFn: () => tessera.GET('/api/v1/login/branding', { params: { query: { tenantCode: code } } }),
    enabled: valid,
    staleTime: 60_000,
    // Why no retry: a page without its branding still works; a budget spent must not be spent faster.
    retry: false,
  })
  return valid ? (branding.data ?? null) : null
}

/**
 * Sets the brand colour, and black or white text on it, as the stylesheet's `--brand` and `--on-brand` (the
 * primary button and the brand's rule use them). Why on the root through the CSSOM: the CSP admits no inline
 * style attribute, and the variables must reach every primary button of the page. Removed when the page goes.
 */
function useBrandColor(color: string | null | undefined): void {
  useEffect(() => {
    if (!color) return
    const root = document.documentElement.style
    root.setProperty('--brand', color)
    root.setProperty('--on-brand', textOn(color))
    return () => {
      root.removeProperty('--brand')
      root.removeProperty('--on-brand')
    }
  }, [color])
}

/**
 * The tenant's name and logo above a public page's form (sign-in, forgotten password, the mail links' pages,
 * the OpenID provider's sign-in), and its colour on the page's primary button (issue 44). Nothing when the
 * tenant has no branding, is unknown, or the code is not one.
 */
export function Brand({ tenantCode }: { tenantCode: string | undefined }) {
  const branding = useBranding(tenantCode)
  useBrandColor(branding?.color)
  if (!branding || (!branding.displayName && !branding.logo)) return null
  return (
    <div className="brand">
      {branding.logo && (
        <img
          src={branding.logo}
          alt={branding.displayName ? '' : t('brand.logoAlt')}
          className="brand-logo"
        />
      )}
      {branding.displayName && <p className="brand-name">{branding.displayName}</p>}
    </div>
  )
}
