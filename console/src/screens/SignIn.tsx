import { useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react'
import { SecondFactorRequired, type SecondFactorSetup } from '@tessera/client'
import { keepLogin, rememberedTenant, rememberSignIn, tessera } from '../api'
import { useSession } from '../session'
import { FormFooter } from '../ui/FormFooter'
import { Link } from '../router'
import { qrSource } from '../lib/qr'
import { PasskeySignIn } from '../passkeys/PasskeySignIn'
import { ContinueWith } from '../federation/ContinueWith'
import { federationError, takeReturn } from '../federation/flow'
import { RecoveryCodes } from '../users/RecoveryCodes'
import { Brand } from '../branding/Brand'
import { t } from '../i18n'

// Why outside the component: a login code is single use, and a remount (StrictMode's) must not send it twice.
let federatedSent = false

/**
 * Sign-in (contract section 19): the three fields and "Sign in", then "Code" when a factor is asked. The
 * provider's interaction page (section 23) shows the same form for its tenant (`tenantCode`, fixed) and the
 * request's `login_hint` (`identifier`), under its own heading and lead. Below it, "Continue with {name}" for
 * the tenant's other providers (section 24); a flow of theirs that returns here signs in as a password does.
 * Above it, the tenant's name and logo, and its colour on the button (issue 44), following the Tenant field.
 */
export function SignIn(props: {
  tenantCode?: string
  identifier?: string
  heading?: string
  lead?: ReactNode
  /** After the session holds the new tokens (the interaction page then hands them to the provider). */
  onSignedIn?: () => void
  /** Below the form, inside the page's main landmark. */
  children?: ReactNode
}) {
  const session = useSession()
  const signedIn = () => {
    session.update()
    props.onSignedIn?.()
  }
  const [error, setError] = useState<unknown>(null)
  const [pending, setPending] = useState(false)
  const [mfa, setMfa] = useState<{ token: string; setup: SecondFactorSetup | null } | null>(null)
  const [recovery, setRecovery] = useState<string[] | null>(null)
  const tenantField = useRef<HTMLInputElement>(null)
  // Why read at the first render: the flow's fragment is removed from the address as soon as it is read.
  const [back] = useState(() => {
    const returned = takeReturn()
    return returned?.intent === 'login' ? returned : null
  })
  const [tenantTyped, setTenantTyped] = useState(
    props.tenantCode ?? back?.tenantCode ?? rememberedTenant() ?? 'platform',
  )
  /** The Tenant field's value, for a passkey sign-in; null (and the field's own message) when empty. */
  const tenantCode = () => {
    const field = tenantField.current
    const code = field?.value.trim() ?? ''
    if (code === '') field?.reportValidity()
    return code || null
  }

  const signIn = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget)
    const who = {
      tenantCode: String(form.get('tenant')).trim(),
      identifier: String(form.get('identifier')).trim(),
    }
    await attempt(async () => {
      if (mfa) {
        const done = await tessera.completeLogin({
          mfaToken: mfa.token,
          code: String(form.get('code')).trim(),
        })
        if (done.recoveryCodes) {
          setRecovery(done.recoveryCodes)
          return
        }
      } else {
        rememberSignIn(who)
        await tessera.login({ ...who, password: String(form.get('password')) })
      }
      signedIn()
    })
  }

  /** One sign-in step: a login, or the second factor after it (SecondFactorRequired then shows the code). */
  const attempt = async (act: () => Promise<void>) => {
    setPending(true)
    setError(null)
    try {
      await act()
    } catch (err) {
      if (err instanceof SecondFactorRequired) {
        const setup = err.enrollment ? await tessera.setupSecondFactor(err.mfaToken).catch(() => null) : null
        setMfa({ token: err.mfaToken, setup })
      } else setError(err)
    } finally {
      setPending(false)
    }
  }

  const login = back?.login
  useEffect(() => {
    if (!back || !login || federatedSent) return
    federatedSent = true
    void attempt(async () => {
      const body = { tenantCode: back.tenantCode, code: login.code, codeVerifier: login.verifier }
      const data = await tessera.POST('/api/v1/login/federated', { body })
      keepLogin(data)
      // Who signed in, so a password asked again later in place (section 22) needs no other field.
      rememberSignIn({ tenantCode: back.tenantCode, identifier: data.user.email ?? data.user.username ?? '' })
      signedIn()
    })
    // Why not on `attempt` and `signedIn`: they are new at every render, and the code is sent once.
  }, [back, login])

  if (recovery) {
    return (
      <main id="main" className="narrow">
        <h1>{t('signIn.recovery')}</h1>
        <p>{t('signIn.keepCodes')}</p>
        <RecoveryCodes codes={recovery} tenant={tessera.claims()?.tenantCode ?? tenantTyped} />
        <button type="button" className="primary" onClick={signedIn}>
          {t('signIn.continue')}
        </button>
      </main>
    )
  }

  return (
    <main id="main" className="narrow">
      <Brand tenantCode={tenantTyped} />
      <h1>{props.heading ?? t('signIn.title')}</h1>
      {props.lead}
      {back?.error && (
        <p role="alert" className="error">
          {federationError(back.error, back.providerName)}
        </p>
      )}
      <form onSubmit={signIn} className="stack">
        <div hidden={mfa !== null} className="stack">
          <label>
            {t('signIn.tenant')}
            <input
              ref={tenantField}
              name="tenant"
              autoComplete="organization"
              required
              defaultValue={tenantTyped}
              readOnly={props.tenantCode !== undefined}
              onChange={(e) => setTenantTyped(e.target.value)}
            />
          </label>
          <label>
            {t('signIn.identifier')}
            <input
              name="identifier"
              autoComplete="username"
              required={!mfa}
              defaultValue={props.identifier ?? ''}
            />
          </label>
          <label>
            {t('signIn.password')}
            <input name="password" type="password" autoComplete="current-password" required={!mfa} />
          </label>
        </div>
        {mfa && (
          <>
            {mfa.setup && (
              <div>
                <p>{t('account.scan')}</p>
                <img src={qrSource(mfa.setup.qrCodeSvg)} alt={t('account.qrAlt')} width={200} height={200} />
                <p>
                  {t('account.orSecret')} <code>{mfa.setup.secret}</code>
                </p>
              </div>
            )}
            <p>{t('signIn.enterCode')}</p>
            <label>
              {t('account.code')}
              <input name="code" autoComplete="one-time-code" required autoFocus />
            </label>
          </>
        )}
        <FormFooter submit={t('signIn.title')} error={error} pending={pending} layout="stacked" />
      </form>
      {!mfa && <PasskeySignIn tenantCode={tenantCode} onSignedIn={props.onSignedIn} />}
      {!mfa && <ContinueWith tenantCode={tenantTyped} />}
      {!mfa && (
        <p>
          <Link to="/forgot-password">{t('shell.forgotTitle')}</Link>
        </p>
      )}
      {props.children}
    </main>
  )
}
