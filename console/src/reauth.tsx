import { createContext, useContext, useRef, useState, type FormEvent, type ReactNode } from 'react'
import { ReauthenticationRequired, SecondFactorRequired } from '@tessera/client'
import { signedInAs, tessera } from './api'
import { useSession } from './session'
import { FormFooter } from './ui/FormFooter'
import { t } from './i18n'

type Reauth = <R>(act: () => Promise<R>) => Promise<R>
const ReauthContext = createContext<Reauth>((act) => act())

export const useReauth = (): Reauth => useContext(ReauthContext)

interface Pending {
  resolve: () => void
  reject: (err: unknown) => void
}

/**
 * Contract section 22: some acts need a sign-in of the last 10 minutes. When one answers
 * REAUTHENTICATION_REQUIRED this asks for the password again (and the code, when the user has a second
 * factor) in a dialog over the screen, signs in again through the SDK, and retries the act once.
 */
export function ReauthProvider({ children }: { children: ReactNode }) {
  const session = useSession()
  const [pending, setPending] = useState<Pending | null>(null)
  const [mfaToken, setMfaToken] = useState<string | null>(null)
  const [error, setError] = useState<unknown>(null)
  const password = useRef<HTMLInputElement>(null)
  const code = useRef<HTMLInputElement>(null)

  const reauth: Reauth = async (act) => {
    try {
      return await act()
    } catch (err) {
      if (!(err instanceof ReauthenticationRequired)) throw err
      await new Promise<void>((resolve, reject) => setPending({ resolve, reject }))
      return act()
    }
  }

  const close = (err?: unknown) => {
    if (err) pending?.reject(err)
    else pending?.resolve()
    setPending(null)
    setMfaToken(null)
    setError(null)
  }

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    setError(null)
    const who = signedInAs()
    try {
      if (mfaToken) await tessera.completeLogin({ mfaToken, code: code.current?.value ?? '' })
      else if (who) await tessera.reauthenticate({ ...who, password: password.current?.value ?? '' })
      session.update()
      close()
    } catch (err) {
      if (err instanceof SecondFactorRequired) setMfaToken(err.mfaToken)
      else setError(err)
    }
  }

  return (
    <ReauthContext.Provider value={reauth}>
      {children}
      {pending && (
        <div className="overlay">
          <form
            role="dialog"
            aria-modal="true"
            aria-labelledby="reauth-title"
            className="dialog"
            onSubmit={submit}
          >
            <h2 id="reauth-title">{t('reauth.title')}</h2>
            <p>{t('reauth.help')}</p>
            {mfaToken ? (
              <label>
                {t('account.code')}
                <input ref={code} autoComplete="one-time-code" inputMode="numeric" required autoFocus />
              </label>
            ) : (
              <label>
                {t('signIn.password')}
                <input ref={password} type="password" autoComplete="current-password" required autoFocus />
              </label>
            )}
            <FormFooter
              submit={t('reauth.confirm')}
              error={error}
              onCancel={() => close(new Error(t('reauth.cancelled')))}
            />
          </form>
        </div>
      )}
    </ReauthContext.Provider>
  )
}
