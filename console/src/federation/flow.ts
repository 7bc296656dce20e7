import { t } from '../i18n'

/**
 * The browser's side of a sign-in through another provider (contract section 24): the page's own PKCE pair,
 * the trip to the tenant's authorize step, and what the page finds in its fragment when the flow returns.
 */

// Why sessionStorage: the tab leaves for the provider and comes back, and the verifier must be there then,
// but nowhere else (another tab, a later visit).
const VERIFIER = 'tessera.federation.verifier.'
const FLOW = 'tessera.federation.flow'
/** A flow older than this is not the one returning (the service's flow cookie lives 10 minutes). */
const FLOW_LIFE_MS = 10 * 60_000

/** The flow this tab started, kept while it is away at the provider. */
interface Started {
  tenantCode: string
  providerName: string
  intent: 'login' | 'link'
  at: number
}

/** What the page found on its return from a flow this tab started. */
interface Returned {
  tenantCode: string
  providerName: string
  intent: 'login' | 'link'
  /** The login code of a sign-in, with the verifier of the challenge it is bound to. */
  login: { code: string; verifier: string } | null
  /** The flow's error code, as the service words it in the fragment. */
  error: string | null
}

function base64url(bytes: Uint8Array): string {
  let text = ''
  for (const b of bytes) text += String.fromCharCode(b)
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** RFC 7636: a verifier of 32 random bytes and its S256 challenge. */
async function pkcePair(): Promise<{ verifier: string; challenge: string }> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)))
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))
  return { verifier, challenge: base64url(new Uint8Array(digest)) }
}

/**
 * Leaves for the tenant's authorize step of this provider; the flow comes back to this very page (its
 * address without the fragment). `linkToken`: link the provider's identity to the signed-in user instead.
 */
export async function startFederation(
  tenantCode: string,
  provider: { id: string; name: string },
  linkToken?: string,
): Promise<void> {
  const { verifier, challenge } = await pkcePair()
  sessionStorage.setItem(VERIFIER + tenantCode.toLowerCase(), verifier)
  const started: Started = {
    tenantCode,
    providerName: provider.name,
    intent: linkToken ? 'link' : 'login',
    at: Date.now(),
  }
  sessionStorage.setItem(FLOW, JSON.stringify(started))
  const here = new URL(window.location.href)
  here.hash = ''
  const query = new URLSearchParams({
    return_to: here.href,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  })
  if (linkToken) {
    query.set('intent', 'link')
    query.set('link_token', linkToken)
  }
  const tenant = encodeURIComponent(tenantCode)
  window.location.assign(`/t/${tenant}/federation/${encodeURIComponent(provider.id)}/authorize?${query}`)
}

function startedFlow(): Started | null {
  const raw = sessionStorage.getItem(FLOW)
  if (!raw) return null
  try {
    const flow = JSON.parse(raw) as Started
    return Date.now() - flow.at < FLOW_LIFE_MS ? flow : null
  } catch {
    return null
  }
}

// Why once per page load: the fragment's code is single use, and the sign-in page and Account both ask.
let taken: Returned | null | undefined

/**
 * The flow this page returned from, read once: the fragment is removed from the address at once (a code in
 * the history or a shared link is worth nothing to keep), and so is the tab's record of the flow.
 */
export function takeReturn(): Returned | null {
  if (taken !== undefined) return taken
  const fragment = new URLSearchParams(window.location.hash.slice(1))
  const code = fragment.get('login_code')
  const error = fragment.get('error')
  if (code !== null || error !== null) {
    const { pathname, search } = window.location
    window.history.replaceState(window.history.state, '', pathname + search)
  }
  const flow = startedFlow()
  if (!flow) {
    // Why still say an error: the tab may have lost its record (another tab's flow, storage cleared), and
    // the person deserves the reason; a code without its verifier is worth nothing.
    taken = error === null ? null : { tenantCode: '', providerName: '', intent: 'login', login: null, error }
    return taken
  }
  // A link ends with no fragment at all; a sign-in that has neither code nor error did not return here.
  if (flow.intent === 'login' && code === null && error === null) {
    taken = null
    return null
  }
  sessionStorage.removeItem(FLOW)
  const key = VERIFIER + flow.tenantCode.toLowerCase()
  const verifier = sessionStorage.getItem(key)
  sessionStorage.removeItem(key)
  taken = {
    tenantCode: flow.tenantCode,
    providerName: flow.providerName,
    intent: flow.intent,
    login: code !== null && verifier !== null && error === null ? { code, verifier } : null,
    error,
  }
  return taken
}

/** The sentence for a flow's error code (the service's list in section 24), for the person who tried. */
export function federationError(code: string, providerName: string): string {
  const sentence = words(code, providerName || t('fed.theProvider'))
  return sentence.charAt(0).toUpperCase() + sentence.slice(1)
}

function words(code: string, providerName: string): string {
  switch (code) {
    case 'account_not_linked':
      return t('fed.notLinked', { name: providerName })
    case 'signup_disabled':
      return t('fed.signupDisabled', { name: providerName })
    case 'user_inactive':
      return t('fed.inactive')
    case 'provider_error':
      return t('fed.providerError', { name: providerName })
    case 'already_linked':
      return t('fed.alreadyLinked', { name: providerName })
    case 'invalid_link_token':
      return t('fed.linkToken', { name: providerName })
    default:
      return t('fed.unfinished', { name: providerName })
  }
}
