import { useEffect, useState, type FormEvent, type ReactNode } from 'react'
import { TesseraError } from '@tessera/client'
import { rememberTenant, tessera } from '../api'
import { Link } from '../router'
import { ErrorBox } from '../ui/feedback'
import { FormFooter } from '../ui/FormFooter'
import { Brand } from '../branding/Brand'
import { t } from '../i18n'

// The two public pages that finish section 18's flows from the link in a mail. They are screens of the
// console like any other (one application, one CSP, no inline script), reachable signed in or not.

/** What a mail's link carries: `?tenant=…&token=…`. */
interface LinkParams {
  tenant: string
  token: string
}

/**
 * Reads the link's tenant and token once, then takes them out of the address bar: the token must not
 * stay in the history, a bookmark or a screenshot. Null when the link is incomplete.
 */
function useLinkParams(): LinkParams | null {
  const [params] = useState<LinkParams | null>(() => {
    const q = new URLSearchParams(window.location.search)
    const tenant = q.get('tenant') ?? ''
    const token = q.get('token') ?? ''
    // The link names the person's tenant: the sign-in form after it starts there.
    if (tenant) rememberTenant(tenant)
    return tenant && token ? { tenant, token } : null
  })
  useEffect(() => {
    if (window.location.search) window.history.replaceState(null, '', window.location.pathname)
  }, [])
  return params
}

/**
 * One page of a mail's link: the link's tenant's branding (issue 44), its heading, its form, and what the
 * answer means to a person.
 */
function LinkPage(props: {
  title: string
  done: string
  after?: ReactNode
  send: (link: LinkParams, form: FormData) => Promise<unknown>
  children: ReactNode
  button: string
}) {
  const link = useLinkParams()
  const [error, setError] = useState<unknown>(null)
  const [pending, setPending] = useState(false)
  const [done, setDone] = useState(false)
  useEffect(() => {
    document.title = t('shell.title', { title: props.title })
  }, [props.title])

  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    if (!link) return
    const form = new FormData(e.currentTarget)
    setPending(true)
    setError(null)
    try {
      await props.send(link, form)
      setDone(true)
    } catch (err) {
      setError(err)
    } finally {
      setPending(false)
    }
  }
  // Why the form goes away: a used or expired token never works again, so there is nothing to retry.
  const spent = error instanceof TesseraError && error.code === 'INVALID_EMAIL_TOKEN'

  return (
    <main id="main" className="narrow">
      <Brand tenantCode={link?.tenant} />
      <h1>{props.title}</h1>
      {!link ? (
        <p role="alert">{t('links.incomplete')}</p>
      ) : done ? (
        <>
          <p role="status">{props.done}</p>
          {props.after}
        </>
      ) : (
        <>
          {/* Not an alert of its own: the ErrorBox below is the one alert, with the code and request id. */}
          {spent && <p>{t('links.spent')}</p>}
          {!spent && (
            <form onSubmit={(e) => void submit(e)} className="stack">
              {props.children}
              <FormFooter submit={props.button} pending={pending} layout="stacked" />
            </form>
          )}
          <ErrorBox error={error} />
        </>
      )}
    </main>
  )
}

/** /console/reset-password?tenant=…&token=…: the new password, sent with the mail's token. */
export function ResetPassword() {
  return (
    <LinkPage
      title={t('links.resetTitle')}
      button={t('links.resetButton')}
      done={t('links.resetDone')}
      after={
        <p>
          <Link to="/sign-in">{t('signIn.title')}</Link>
        </p>
      }
      send={(link, form) =>
        tessera.POST('/api/v1/password/reset', {
          body: { tenantCode: link.tenant, token: link.token, newPassword: String(form.get('password')) },
        })
      }
    >
      <label>
        {t('account.new')}
        <input
          name="password"
          type="password"
          autoComplete="new-password"
          required
          minLength={8}
          maxLength={256}
        />
      </label>
    </LinkPage>
  )
}

/**
 * /console/verify-email?tenant=…&token=…: a button, not a request on load, so a mail scanner that opens
 * the link verifies nothing.
 */
export function VerifyEmail() {
  return (
    <LinkPage
      title={t('links.verifyTitle')}
      button={t('links.verifyButton')}
      done={t('links.verifyDone')}
      send={(link) =>
        tessera.POST('/api/v1/email/verify', { body: { tenantCode: link.tenant, token: link.token } })
      }
    >
      <p>{t('links.press')}</p>
    </LinkPage>
  )
}
