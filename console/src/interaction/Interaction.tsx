import { useEffect, useRef, useState } from 'react'
import { useQuery } from '@tanstack/react-query'
import { TesseraError } from '@tessera/client'
import { tessera } from '../api'
import { useAction } from '../action'
import { useSession } from '../session'
import { t } from '../i18n'
import { SignIn } from '../screens/SignIn'
import { ErrorBox, Loading } from '../ui/feedback'
import { Consent } from './Consent'
import type { InteractionAddress } from './route'

/** Leaves for the provider's next address (the client's redirect URI, or the next step of the flow). */
function go(to: { redirectTo: string }): void {
  window.location.assign(to.redirectTo)
}

/**
 * The provider's sign-in and consent page (contract section 23), at /t/{tenantCode}/interaction/{uid}: the
 * console's own sign-in for that tenant, then the interaction's JSON operations with the fresh access token.
 * Why a sign-in made here, never a session the tab already held: `prompt=login` and `max_age` ask for a new
 * one, and a sign-in the person did not see happen would finish a stranger's request in their name.
 */
export function Interaction({ at }: { at: InteractionAddress }) {
  const session = useSession()
  const path = { params: { path: at } }
  const details = useQuery({
    queryKey: ['interaction', at.uid],
    queryFn: () => tessera.GET('/t/{tenantCode}/interaction/{uid}/details', path),
    staleTime: Infinity,
  })
  const [signedInHere, setSignedInHere] = useState(false)
  const login = useAction(() => tessera.POST('/t/{tenantCode}/interaction/{uid}/login', path), go)
  const abort = useAction(() => tessera.POST('/t/{tenantCode}/interaction/{uid}/abort', path), go)
  const sent = useRef(false)
  const clientName = details.data?.client.name

  useEffect(() => {
    document.title = t('interaction.title', {
      title: clientName ? t('interaction.signInTo', { name: clientName }) : t('signIn.title'),
    })
  }, [clientName])

  const ofTenant = session.signedIn && session.tenantCode.toLowerCase() === at.tenantCode.toLowerCase()
  const prompt = details.data?.prompt
  useEffect(() => {
    // Once per sign-in made on this page: the provider session then belongs to it.
    if (prompt === 'login' && signedInHere && ofTenant && !sent.current) {
      sent.current = true
      void login.run()
    }
  }, [prompt, signedInHere, ofTenant, login])

  if (details.isPending) {
    return (
      <main id="main" className="narrow">
        <Loading what={t('interaction.what')} />
      </main>
    )
  }
  if (details.error) {
    const gone = details.error instanceof TesseraError && details.error.status === 404
    return (
      <main id="main" className="narrow">
        <h1>{gone ? t('interaction.ended') : t('signIn.title')}</h1>
        {gone ? <p>{t('interaction.expired')}</p> : <ErrorBox error={details.error} />}
      </main>
    )
  }
  const it = details.data
  const cancel = (
    <div className="stack alternative">
      <ErrorBox error={abort.error} />
      <button type="button" className="secondary" onClick={() => void abort.run()} disabled={abort.pending}>
        {t('interaction.cancel', { name: it.client.name })}
      </button>
    </div>
  )
  if (it.prompt === 'consent' && ofTenant) {
    return <Consent at={at} details={it} onAnswered={go} cancel={cancel} />
  }
  if (it.prompt === 'login' && signedInHere && ofTenant) {
    return (
      <main id="main" className="narrow">
        <h1>{t('interaction.signingIn', { name: it.client.name })}</h1>
        {login.pending && <Loading what={it.client.name} />}
        <ErrorBox error={login.error} />
        {login.error !== null && cancel}
      </main>
    )
  }
  return (
    <SignIn
      tenantCode={at.tenantCode}
      identifier={it.loginHint ?? undefined}
      heading={t('interaction.signInTo', { name: it.client.name })}
      lead={<p>{t('interaction.lead', { tenant: at.tenantCode })}</p>}
      onSignedIn={() => setSignedInHere(true)}
    >
      {cancel}
    </SignIn>
  )
}
