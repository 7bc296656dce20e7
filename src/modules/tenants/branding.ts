import type { AppContext } from '../../context.js'
import { fail } from '../../errors.js'
import type { BrandingConfig } from '../../security/auth-config.js'

/**
 * The largest logo, decoded: 45 KiB, so that its base64 in a configuration's body stays inside the
 * service's 64 KiB (contract section 1), and a sign-in page loads little before anyone has signed in.
 */
const MAX_LOGO_BYTES = 45 * 1024

const NO_BRANDING: BrandingConfig = { displayName: null, logo: null, color: null }

// The first bytes of each image type the logo may be (its "magic number"): a data URL that names one type and
// holds another, or no image at all, is refused rather than handed to every browser that opens the page.
const SIGNATURES: Record<string, (b: Buffer) => boolean> = {
  'image/png': (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  'image/jpeg': (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  'image/webp': (b) => b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP',
}

/** What is wrong with a logo the schema let through (its form only), in words; null when it is acceptable. */
function logoProblem(logo: string): string | null {
  const m = /^data:(image\/(?:png|jpeg|webp));base64,([A-Za-z0-9+/]+={0,2})$/.exec(logo)
  if (!m) return 'must be a data: URL of a PNG, JPEG or WebP image in base64'
  const [, type, data] = m as unknown as [string, string, string]
  // Why by hand: Buffer.from(…, 'base64') skips what it cannot read, so a broken string would pass.
  if (data.length % 4 !== 0) return 'has broken base64'
  const bytes = Buffer.from(data, 'base64')
  if (bytes.length > MAX_LOGO_BYTES) return `must be at most ${MAX_LOGO_BYTES / 1024} KB decoded`
  if (!SIGNATURES[type]?.(bytes)) return `is not a ${type.slice(6).toUpperCase()} image`
  return null
}

/** Every key of a merged `branding` set (a patch may have named some only); null stays null. */
export function completeBranding(branding: Partial<BrandingConfig> | null): BrandingConfig | null {
  if (branding === null) return null
  return { ...NO_BRANDING, ...branding }
}

/** Refuses a merged `branding` whose logo is not what it claims: 400 VALIDATION_ERROR naming the field. */
export function assertBrandingConfig(branding: BrandingConfig | null, at: string): void {
  const problem = branding?.logo ? logoProblem(branding.logo) : null
  if (problem) fail('VALIDATION_ERROR', undefined, [{ path: `${at}.branding.logo`, message: problem }])
}

/**
 * GET /login/branding: an ACTIVE tenant's branding, from the tenant cache. Nulls for an unknown or inactive
 * tenant and for one with none alike, so the answer tells nobody which tenants exist.
 */
export async function getLoginBranding(ctx: AppContext, tenantCode: string): Promise<BrandingConfig> {
  const tenant = await ctx.tenants.byCode(tenantCode)
  if (!tenant || tenant.status !== 'ACTIVE') return NO_BRANDING
  return tenant.authConfig.branding ?? NO_BRANDING
}
