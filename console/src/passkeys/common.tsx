import { isTesseraError, type Passkey } from '@tessera/client'
import { ErrorBox } from '../ui/feedback'
import { when } from '../ui/format'
import { browserProblem } from '../lib/webauthn-errors'

/** 409 PASSKEYS_DISABLED: the tenant has no auth_config.webauthn. Not a failure: a fact about the tenant. */
export const passkeysOff = (err: unknown): boolean => isTesseraError(err, 'PASSKEYS_DISABLED')

export function PasskeysOff() {
  return (
    <p className="muted">
      Passkeys are off for this tenant. An administrator turns them on with <code>auth_config.webauthn</code>{' '}
      in Settings.
    </p>
  )
}

/**
 * A failure of a passkey act: the browser's side (a cancelled prompt) as a short sentence, anything else as
 * every error is shown (the contract's message and the request id).
 */
export function PasskeyError({ error }: { error: unknown }) {
  const problem = browserProblem(error)
  if (problem) {
    return (
      <p role="status" className="field-error">
        {problem}
      </p>
    )
  }
  if (passkeysOff(error)) return <PasskeysOff />
  return <ErrorBox error={error} />
}

/** What the list shows of a passkey: never its key or credential id (the API has neither). */
export function PasskeyFacts({ passkey }: { passkey: Passkey }) {
  return (
    <span>
      <strong>{passkey.name}</strong> · added {when(passkey.createdAt)} · last used{' '}
      {passkey.lastUsedAt ? when(passkey.lastUsedAt) : 'never'} ·{' '}
      {passkey.backedUp ? 'backed up' : 'not backed up'}
    </span>
  )
}
