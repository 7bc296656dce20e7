import { createTesseraClient, type components, type Tokens } from '@tessera/client'

// Why sessionStorage for the refresh token only: it survives a reload of the tab but not the tab itself,
// and the access token, which every call carries, never touches storage (contract section 19).
const REFRESH = 'tessera.refreshToken'
const WHO = 'tessera.signedInAs'

/** Who signed in: kept (no secret) so a password asked again in place needs no other field. */
export interface SignedInAs {
  tenantCode: string
  identifier: string
}

function store(tokens: Tokens | null): void {
  if (tokens) sessionStorage.setItem(REFRESH, tokens.refreshToken)
  else {
    sessionStorage.removeItem(REFRESH)
    sessionStorage.removeItem(WHO)
  }
}

/** The one client of the console: every call goes through it (one refresh in flight, typed errors). */
export const tessera = createTesseraClient({
  baseUrl: window.location.origin,
  onTokens: store,
  // Why no retries: a person is watching; a 429 is shown at once with its reason.
  retry: false,
})

/**
 * Keeps the tokens of a login the SDK has no helper for (a federated sign-in's `POST /login/federated`), as
 * its own `login` keeps them: the access token in memory, the refresh token in sessionStorage.
 */
export function keepLogin(data: components['schemas']['LoginResponse']): void {
  const tokens = { accessToken: data.accessToken, refreshToken: data.refreshToken }
  tessera.setTokens(tokens)
  store(tokens)
}

export function rememberSignIn(who: SignedInAs): void {
  sessionStorage.setItem(WHO, JSON.stringify(who))
  rememberTenant(who.tenantCode)
}

// Why localStorage for the tenant's code: it is no secret, and a person signs in to the same tenant again
// after signing out or closing the tab (issue 44: it fell back to "platform" each time).
const TENANT = 'tessera.tenant'

/** Keeps the tenant a person last signed in to, or that a mail's link named, for the next sign-in form. */
export function rememberTenant(code: string): void {
  if (code) localStorage.setItem(TENANT, code)
}

/** The tenant this browser last used; null the first time. */
export function rememberedTenant(): string | null {
  return localStorage.getItem(TENANT)
}

export function signedInAs(): SignedInAs | null {
  const raw = sessionStorage.getItem(WHO)
  return raw ? (JSON.parse(raw) as SignedInAs) : null
}

/**
 * After a reload: the access token is gone (memory only), so trade the stored refresh token for a new
 * pair. False when there is none or the service refuses it (the session is over).
 */
export async function resumeSession(): Promise<boolean> {
  const refreshToken = sessionStorage.getItem(REFRESH)
  if (!refreshToken) return false
  tessera.setTokens({ accessToken: '', refreshToken })
  try {
    await tessera.refresh()
    return true
  } catch {
    tessera.setTokens(null)
    store(null)
    return false
  }
}
