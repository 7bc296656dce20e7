import type { ReactNode } from 'react'
import type { components } from '@tessera/client'
import { tessera, signedInAs } from '../api'
import { useAction } from '../action'
import { ErrorBox } from '../ui/feedback'
import type { InteractionAddress } from './route'
import { scopeInWords } from './scope-words'

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
      <h1>{client.name} asks for access to your account</h1>
      {who?.identifier && <p className="muted">Signed in as {who.identifier}</p>}
      {client.clientUri && (
        <p>
          <a href={client.clientUri} rel="noopener noreferrer" target="_blank">
            {new URL(client.clientUri).host}
          </a>
        </p>
      )}
      <h2>It will be able to</h2>
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
          Allow
        </button>
        <button
          type="button"
          className="secondary"
          onClick={() => void answer.run(false)}
          disabled={answer.pending}
        >
          Deny
        </button>
      </div>
      <p className="muted">You can withdraw this access later, under Account in the console.</p>
    </main>
  )
}
