import { useState } from 'react'
import { rememberSignIn, tessera } from '../api'
import { useSession } from '../session'
import { PasskeyError } from './common'
import { signWithPasskey } from './webauthn'
import { t } from '../i18n'

/**
 * "Sign in with a passkey" (contract section 21), for the tenant in the sign-in form's Tenant field: the
 * tenant's options, the browser's passkey prompt, then the SDK session helper's loginWithPasskey, which keeps
 * the tokens as a password login does (the access token in memory, the refresh token in sessionStorage).
 */
export function PasskeySignIn({
  tenantCode,
  onSignedIn,
}: {
  tenantCode: () => string | null
  onSignedIn?: () => void
}) {
  const session = useSession()
  const [error, setError] = useState<unknown>(null)
  const [pending, setPending] = useState(false)

  const signIn = async () => {
    const tenant = tenantCode()
    if (!tenant) return
    setPending(true)
    setError(null)
    try {
      const options = await tessera.passkeyLoginOptions(tenant)
      const data = await tessera.loginWithPasskey(tenant, await signWithPasskey(options))
      // Who signed in, so a password asked again later in place (section 22) needs no other field.
      const identifier =
        data.user.email ??
        data.user.username ??
        (await tessera.GET('/api/v1/me').then(
          (me) => me.cpf_cnpj,
          () => null,
        ))
      rememberSignIn({ tenantCode: tenant, identifier: identifier ?? '' })
      session.update()
      onSignedIn?.()
    } catch (err) {
      setError(err)
    } finally {
      setPending(false)
    }
  }

  return (
    <div className="stack alternative">
      <PasskeyError error={error} />
      <button type="button" className="primary" onClick={() => void signIn()} disabled={pending}>
        {t('passkey.signIn')}
      </button>
    </div>
  )
}
