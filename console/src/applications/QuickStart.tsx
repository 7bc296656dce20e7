import type { components } from '@tessera/client'
import { CopyButton } from '../ui/CopyButton'
import { t } from '../i18n'

type OAuthClient = components['schemas']['OAuthClient']

/** A single-quoted JavaScript string literal. */
const js = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`

/** How openid-client must authenticate: as the client registered, or the provider refuses it. */
function authentication(c: OAuthClient): string {
  switch (c.tokenEndpointAuthMethod) {
    case 'client_secret_basic':
      return 'client.ClientSecretBasic(secret)'
    case 'client_secret_post':
      return 'client.ClientSecretPost(secret)'
    case 'none':
      return 'client.None()'
  }
}

/**
 * The code flow with PKCE in `openid-client` 6, as docs/api-guide.md's "Sign in with Tessera" shows it, filled in
 * with the client's id, its first redirect URI and its scopes. The secret is read from the environment:
 * the console never holds it after it was shown.
 */
function quickStart(c: OAuthClient, issuer: string): string {
  const redirect = c.redirectUris[0] ?? 'https://app.example.com/callback'
  const scope = c.scopes.length ? c.scopes.join(' ') : 'openid'
  const insecure = issuer.startsWith('http:')
  const secret =
    c.type === 'confidential'
      ? `
const secret = process.env.TESSERA_CLIENT_SECRET
if (!secret) throw new Error('TESSERA_CLIENT_SECRET is not set')
`
      : ''
  return `// npm install openid-client@6
import * as client from 'openid-client'
${secret}
const config = await client.discovery(
  new URL(${js(issuer)}),
  ${js(c.clientId)},
  undefined,
  ${authentication(c)},${
    insecure
      ? `
  // This issuer is plain http (a service on your machine): openid-client refuses that unless told.
  { execute: [client.allowInsecureRequests] },`
      : ''
  }
)

// The sign-in: keep the verifier and the state in the person's session, then send the browser to url.
const verifier = client.randomPKCECodeVerifier()
const state = client.randomState()
const url = client.buildAuthorizationUrl(config, {
  redirect_uri: ${js(redirect)},
  scope: ${js(scope)},
  code_challenge: await client.calculatePKCECodeChallenge(verifier),
  code_challenge_method: 'S256',
  state,
})

// Back at ${redirect}, callbackUrl being the whole URL the browser came back to:
const tokens = await client.authorizationCodeGrant(config, new URL(callbackUrl), {
  pkceCodeVerifier: verifier,
  expectedState: state,
})
const claims = tokens.claims() // sub, email, auth_time, amr, ...
`
}

/** The quick start of one application, with a button that copies it. */
export function QuickStart({ c, issuer }: { c: OAuthClient; issuer: string }) {
  const code = quickStart(c, issuer)
  return (
    <section aria-labelledby="quick-start" className="panel wide stack">
      <h2 id="quick-start">{t('quick.title')}</h2>
      <p className="muted">
        {t('quick.before')} <code>openid-client</code> {t('quick.after')}
        {c.type === 'confidential' && ` ${t('quick.secret')}`}
      </p>
      {!c.grantTypes.includes('authorization_code') && <p className="error">{t('quick.noCode')}</p>}
      {/* Why focusable: the code is wider than its panel, and a keyboard user must be able to scroll it. */}
      <pre className="snippet" tabIndex={0} role="region" aria-label={t('quick.region')}>
        {code}
      </pre>
      <div className="row">
        <CopyButton text={code} label={t('quick.copy')} />
      </div>
    </section>
  )
}
