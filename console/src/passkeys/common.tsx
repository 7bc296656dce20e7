import { isTesseraError, type Passkey } from '@tessera/client'
import { useQuery } from '@tanstack/react-query'
import { tessera } from '../api'
import { ErrorBox } from '../ui/feedback'
import { when } from '../ui/format'
import { browserProblem } from '../lib/webauthn-errors'
import { t } from '../i18n'

/** 409 PASSKEYS_DISABLED: the tenant has no auth_config.webauthn. Not a failure: a fact about the tenant. */
export const passkeysOff = (err: unknown): boolean => isTesseraError(err, 'PASSKEYS_DISABLED')

/**
 * Whether the caller's tenant has passkeys on (its `auth_config.webauthn`), read before any passkey call, so
 * a tenant with passkeys off costs no 409 in the browser's console (issue 44); undefined until known.
 */
export function usePasskeysOn(): boolean | undefined {
  const config = useQuery({
    queryKey: ['tenant', 'me', 'config'],
    queryFn: () => tessera.GET('/api/v1/tenants/me/config'),
    staleTime: 60_000,
  })
  // Why true when it cannot be read: the passkey call then says what holds, as it did before.
  if (config.error) return true
  return config.data ? config.data.webauthn != null : undefined
}

export function PasskeysOff() {
  return (
    <p className="muted">
      {t('passkey.off')} <code>auth_config.webauthn</code> {t('passkey.offAfter')}
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
      <strong>{passkey.name}</strong> ·{' '}
      {t('passkey.facts', {
        added: when(passkey.createdAt),
        used: passkey.lastUsedAt ? when(passkey.lastUsedAt) : t('passkey.never'),
        backup: passkey.backedUp ? t('passkey.backedUp') : t('passkey.notBackedUp'),
      })}
    </span>
  )
}
