import { useState, type FormEvent } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { qrSource } from '../lib/qr'
import { AuthorizedApps } from '../applications/AuthorizedApps'
import { MyPasskeys } from '../passkeys/MyPasskeys'
import { LinkedIdentities } from '../federation/LinkedIdentities'
import { useAction } from '../action'
import { ConfirmButton } from '../ui/ConfirmButton'
import { ErrorBox, Loading } from '../ui/feedback'
import { FormFooter } from '../ui/FormFooter'
import { when } from '../ui/format'
import { List } from '../ui/List'
import { PasswordRule, fitting } from '../users/PasswordRule'
import { RecoveryCodes } from '../users/RecoveryCodes'
import { useSession } from '../session'
import { count } from '../lib/plural'

type Setup = components['schemas']['OtpSetup']

function Password() {
  const [done, setDone] = useState('')
  const change = useAction(
    async (body: { currentPassword: string; newPassword: string }) =>
      tessera.POST('/api/v1/me/password', { body: { ...body, newPassword: fitting(body.newPassword) } }),
    (r) => setDone(`Password changed; ${r.sessionsRevoked} other sessions were signed out.`),
  )
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const f = new FormData(e.currentTarget)
    const form = e.currentTarget
    void change
      .run({ currentPassword: String(f.get('current')), newPassword: String(f.get('new')) })
      .then((r) => r && form.reset())
  }
  return (
    <section aria-labelledby="password" className="panel">
      <h2 id="password">Password</h2>
      <form onSubmit={submit} className="stack">
        <label>
          Current password
          <input name="current" type="password" autoComplete="current-password" required />
        </label>
        <label>
          New password
          <input
            name="new"
            type="password"
            autoComplete="new-password"
            required
            aria-describedby="new-password-rule"
          />
        </label>
        <PasswordRule id="new-password-rule" />
        <FormFooter
          submit="Change password"
          error={change.error}
          pending={change.pending}
          status={done}
          layout="stacked"
        />
      </form>
    </section>
  )
}

function Sessions() {
  const queries = useQueryClient()
  const refresh = () => void queries.invalidateQueries({ queryKey: ['me', 'sessions'] })
  const sessions = useQuery({
    queryKey: ['me', 'sessions'],
    queryFn: () => tessera.GET('/api/v1/me/sessions'),
  })
  const revoke = useAction(
    (sessionId: string) =>
      tessera.DELETE('/api/v1/me/sessions/{sessionId}', { params: { path: { sessionId } } }),
    refresh,
  )
  const others = useAction(() => tessera.POST('/api/v1/me/sessions/revoke-others'), refresh)
  const items = sessions.data?.items ?? []
  return (
    <section aria-labelledby="my-sessions" className="panel">
      <h2 id="my-sessions">Sessions</h2>
      <List
        what="sessions"
        error={sessions.error ?? revoke.error ?? others.error}
        pending={sessions.isPending}
        items={items}
        empty="No active session."
      >
        {(rows) => (
          <ul className="list">
            {rows.map((s) => (
              <li key={s.id}>
                <span>
                  {s.current ? <strong>This session</strong> : 'Session'} · last used {when(s.lastUsedAt)}{' '}
                  from {s.ip ?? 'an unknown address'} · {s.userAgent ?? 'unknown browser'}
                </span>
                {!s.current && (
                  <button
                    type="button"
                    className="danger-quiet"
                    onClick={() => void revoke.run(s.id)}
                    aria-label={`Revoke session last used ${when(s.lastUsedAt)}`}
                  >
                    Revoke
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </List>
      {items.length > 1 && (
        <button type="button" className="danger-quiet" onClick={() => void others.run()}>
          Sign out all other sessions
        </button>
      )}
    </section>
  )
}

function SecondFactor() {
  const session = useSession()
  const queries = useQueryClient()
  const otp = useQuery({ queryKey: ['me', 'otp'], queryFn: () => tessera.GET('/api/v1/me/otp') })
  const [setup, setSetup] = useState<Setup | null>(null)
  const [codes, setCodes] = useState<string[] | null>(null)
  const refresh = () => void queries.invalidateQueries({ queryKey: ['me', 'otp'] })
  const start = useAction(() => tessera.POST('/api/v1/me/otp/setup', { body: {} }), setSetup)
  const confirm = useAction(
    (code: string) => tessera.POST('/api/v1/me/otp/confirm', { body: { code } }),
    (r) => {
      setSetup(null)
      setCodes(r.recoveryCodes)
      refresh()
    },
  )
  const disable = useAction((code: string) => tessera.DELETE('/api/v1/me/otp', { body: { code } }), refresh)
  const renew = useAction(
    (code: string) => tessera.POST('/api/v1/me/otp/recovery-codes', { body: { code } }),
    (r) => {
      setCodes(r.recoveryCodes)
      refresh()
    },
  )
  const codeOf = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    return String(new FormData(e.currentTarget).get('code')).trim()
  }
  return (
    <section aria-labelledby="otp" className="panel">
      <h2 id="otp">Second factor</h2>
      <ErrorBox error={otp.error ?? start.error ?? confirm.error ?? disable.error ?? renew.error} />
      {otp.isPending && <Loading what="your second factor" />}
      {codes && (
        <div className="callout">
          <p>Your recovery codes, shown only now: each signs you in once without your authenticator.</p>
          <RecoveryCodes codes={codes} tenant={session.tenantCode} />
        </div>
      )}
      {otp.data && !otp.data.enrolled && !setup && (
        <>
          <p>Off: your password alone signs you in.</p>
          <button type="button" onClick={() => void start.run()}>
            Set up an authenticator
          </button>
        </>
      )}
      {setup && (
        <form className="stack" onSubmit={(e) => void confirm.run(codeOf(e))}>
          <p>Scan this QR code with your authenticator app, then enter the code it shows.</p>
          <img
            src={qrSource(setup.qrCodeSvg)}
            alt="QR code of your new authenticator"
            width={200}
            height={200}
          />
          <p>
            Or enter this secret: <code>{setup.secret}</code>
          </p>
          <label>
            Code
            <input name="code" autoComplete="one-time-code" inputMode="numeric" required />
          </label>
          <FormFooter submit="Turn on" layout="stacked" />
        </form>
      )}
      {otp.data?.enrolled && (
        <>
          <p>On: {count(otp.data.recoveryCodesLeft, 'recovery code', 'recovery codes')} left.</p>
          <form
            className="row"
            aria-label="New recovery codes"
            onSubmit={(e) => {
              void renew.run(codeOf(e))
              e.currentTarget.reset()
            }}
          >
            <label>
              Code for new recovery codes
              <input name="code" autoComplete="one-time-code" required />
            </label>
            <FormFooter submit="Renew the recovery codes" layout="inline" />
          </form>
          <form className="row" onSubmit={(e) => void disable.run(codeOf(e))}>
            <label>
              Code
              <input name="code" autoComplete="one-time-code" required />
            </label>
            <FormFooter submit="Turn off the second factor" layout="inline" />
          </form>
        </>
      )}
    </section>
  )
}

function Profile() {
  const me = useQuery({ queryKey: ['me'], queryFn: () => tessera.GET('/api/v1/me') })
  const [sent, setSent] = useState('')
  const verify = useAction(
    () => tessera.POST('/api/v1/me/email/verification'),
    () => setSent('A verification mail is on its way.'),
  )
  return (
    <section aria-labelledby="me" className="panel">
      <h2 id="me">You</h2>
      <ErrorBox error={me.error ?? verify.error} />
      {me.data && (
        <dl className="facts">
          <dt>Email</dt>
          <dd>
            {me.data.email ?? '—'}{' '}
            {me.data.email && (me.data.emailVerified ? '(verified)' : '(not verified)')}
          </dd>
          <dt>Username</dt>
          <dd>{me.data.username ?? '—'}</dd>
          <dt>Roles</dt>
          <dd>{me.data.roles.join(', ') || '—'}</dd>
        </dl>
      )}
      {me.data?.email && !me.data.emailVerified && (
        <ConfirmButton
          label="Verify my email"
          danger={false}
          confirm="Send the mail"
          warning="We will mail you a link."
          onConfirm={() => void verify.run()}
        />
      )}
      <p role="status">{sent}</p>
    </section>
  )
}

export function Account() {
  return (
    <>
      <h1>Account</h1>
      <div className="grid">
        <Profile />
        <Password />
        <Sessions />
        <SecondFactor />
        <MyPasskeys />
        <LinkedIdentities />
        <AuthorizedApps />
      </div>
    </>
  )
}
