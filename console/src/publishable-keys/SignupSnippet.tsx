import type { components } from '@tessera/client'
import { signupSnippet } from '../lib/publishable-keys'
import { CopyButton } from '../ui/CopyButton'
import { t } from '../i18n'

type PublishableKey = components['schemas']['PublishableKey']

/** The HTML a site pastes to sign users up with an active key, with a button that copies it. */
export function SignupSnippet({ k }: { k: PublishableKey }) {
  // Why location.origin: the console is served by the service itself, so its origin is the service's.
  const snippet = signupSnippet(window.location.origin, k.key, k.allowedOrigins)
  return (
    <section aria-labelledby="signup-snippet" className="panel wide stack">
      <h2 id="signup-snippet">{t('snippet.title')}</h2>
      <p className="muted">{t('snippet.help')}</p>
      {/* Why focusable: the snippet is wider than its panel, and a keyboard user must be able to scroll it. */}
      <pre className="snippet" tabIndex={0} role="region" aria-label={t('snippet.region')}>
        {snippet}
      </pre>
      <div className="row">
        <CopyButton text={snippet} label={t('snippet.copy')} />
      </div>
    </section>
  )
}
