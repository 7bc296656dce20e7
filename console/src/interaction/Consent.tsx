import type { ReactNode } from 'react'
import type { components } from '@tessera/client'
import { tessera, signedInAs } from '../api'
import { useAction } from '../action'
import { ErrorBox } from '../ui/feedback'
import type { InteractionAddress } from './route'
import { scopeInWords } from './scope-words'
import { t } from '../i18n'

type Details = components['schemas']['InteractionDetails']

/** The consent page (contract section 23): who asks, each scope in words, "Allow" and "Deny". */
export function Consent(props: {
  at: InteractionAddress
  details: Details
  onAnswered: (to: { redirectTo: string }) => void
  cancel: ReactNode
}) {
  const { client, scopes, resource } = props.details
  const answer = useAction(
    (approve: boolean) =>
      tessera.POST('/t/{tenantCode}/interaction/{uid}/consent', {
        params: { path: props.at },
        body: { approve },
      }),
    props.onAnswered,
  )
  const who = signedInAs()
  return (
    <main id="main" className="narrow">
      {client.logoUri && <img className="client-logo" src={client.logoUri} alt="" width={64} height={64} />}
      <h1>{t('consent.asks', { name: client.name })}</h1>
      {who?.identifier && <p className="muted">{t('consent.as', { who: who.identifier })}</p>}
      {client.clientUri && (
        <p>
          <a href={client.clientUri} rel="noopener noreferrer" target="_blank">
            {new URL(client.clientUri).host}
          </a>
        </p>
      )}
      <h2>{t('consent.able')}</h2>
      <ul>
        {scopes.map((s) => (
          <li key={s}>{scopeInWords(s, resource)}</li>
        ))}
      </ul>
      <ErrorBox error={answer.error} />
      <div className="row">
        <button
          type="button"
          className="primary"
          onClick={() => void answer.run(true)}
          disabled={answer.pending}
        >
          {t('consent.allow')}
        </button>
        <button
          type="button"
          className="secondary"
          onClick={() => void answer.run(false)}
          disabled={answer.pending}
        >
          {t('consent.deny')}
        </button>
      </div>
      <p className="muted">{t('consent.withdraw')}</p>
    </main>
  )
}
