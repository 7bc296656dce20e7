import type { components } from '@tessera/client'
import { signupSnippet } from '../lib/publishable-keys'
import { CopyButton } from '../ui/CopyButton'

type PublishableKey = components['schemas']['PublishableKey']

/** The HTML a site pastes to sign users up with an active key, with a button that copies it. */
export function SignupSnippet({ k }: { k: PublishableKey }) {
  // Why location.origin: the console is served by the service itself, so its origin is the service's.
  const snippet = signupSnippet(window.location.origin, k.key, k.allowedOrigins)
  return (
    <section aria-labelledby="signup-snippet" className="panel wide stack">
      <h2 id="signup-snippet">Sign-up snippet</h2>
      <p className="muted">
        Paste it into a page served from one of the key’s allowed origins, with a copy of the ALTCHA widget’s
        script beside it (the comment at its top says how). Visitors then sign up with a proof of work,
        straight from their browser, and get the key’s default roles.
      </p>
      {/* Why focusable: the snippet is wider than its panel, and a keyboard user must be able to scroll it. */}
      <pre className="snippet" tabIndex={0} role="region" aria-label="HTML of the sign-up snippet">
        {snippet}
      </pre>
      <div className="row">
        <CopyButton text={snippet} label="Copy snippet" />
      </div>
    </section>
  )
}
