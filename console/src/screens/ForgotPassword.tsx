import { useState, type FormEvent } from 'react'
import { rememberedTenant, tessera } from '../api'
import { Brand } from '../branding/Brand'
import { Link } from '../router'
import { FormFooter } from '../ui/FormFooter'
import { t } from '../i18n'

/**
 * "Forgot your password?" (contract section 18): asks for the mail with a reset link. The answer is the
 * same whether or not the account exists, so the page says only that a mail is on its way if it does. The
 * tenant starts as the one this browser last signed in to, and its branding follows the field (issue 44).
 */
export function ForgotPassword() {
  const [error, setError] = useState<unknown>(null)
  const [pending, setPending] = useState(false)
  const [sent, setSent] = useState(false)
  const [tenant, setTenant] = useState(() => rememberedTenant() ?? 'platform')

  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget)
    setPending(true)
    setError(null)
    try {
      await tessera.POST('/api/v1/password/forgot', {
        body: {
          tenantCode: String(form.get('tenant')).trim(),
          identifier: String(form.get('identifier')).trim(),
        },
      })
      setSent(true)
    } catch (err) {
      setError(err)
    } finally {
      setPending(false)
    }
  }

  return (
    <main id="main" className="narrow">
      <Brand tenantCode={tenant} />
      <h1>{t('shell.forgotTitle')}</h1>
      {sent ? (
        <p role="status">{t('forgot.sent')}</p>
      ) : (
        <form onSubmit={(e) => void submit(e)} className="stack">
          <label>
            {t('signIn.tenant')}
            <input
              name="tenant"
              autoComplete="organization"
              required
              defaultValue={tenant}
              onChange={(e) => setTenant(e.target.value)}
            />
          </label>
          <label>
            {t('signIn.identifier')}
            <input name="identifier" autoComplete="username" required />
          </label>
          <FormFooter submit={t('forgot.send')} error={error} pending={pending} layout="stacked" />
        </form>
      )}
      <p>
        <Link to="/sign-in">{t('forgot.back')}</Link>
      </p>
    </main>
  )
}
