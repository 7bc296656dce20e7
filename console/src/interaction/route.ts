/** The provider's interaction page (contract section 23) lives outside /console: `/t/{tenantCode}/interaction/{uid}`. */
export interface InteractionAddress {
  tenantCode: string
  uid: string
}

/** The tenant and uid of an interaction page's path, or null for any other page of the console. */
export function interactionAt(pathname: string): InteractionAddress | null {
  const m = /^\/t\/([A-Za-z0-9_-]+)\/interaction\/([A-Za-z0-9_-]{1,64})\/?$/.exec(pathname)
  return m?.[1] && m[2] ? { tenantCode: m[1], uid: m[2] } : null
}
