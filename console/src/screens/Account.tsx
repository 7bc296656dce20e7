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
import { t } from '../i18n'

type Setup = components['schemas']['OtpSetup']

function Password() {
  const [done, setDone] = useState('')
  const change = useAction(
    async (body: { currentPassword: string; newPassword: string }) =>
      tessera.POST('/api/v1/me/password', { body: { ...body, newPassword: fitting(body.newPassword) } }),
    (r) => setDone(t('account.passwordChanged', { count: r.sessionsRevoked })),
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
      <h2 id="password">{t('account.password')}</h2>
      <form onSubmit={submit} className="stack">
        <label>
          {t('account.current')}
          <input name="current" type="password" autoComplete="current-password" required />
        </label>
        <label>
          {t('account.new')}
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
          submit={t('account.change')}
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
      <h2 id="my-sessions">{t('account.sessions')}</h2>
      <List
        what={t('account.sessionsWhat')}
        error={sessions.error ?? revoke.error ?? others.error}
        pending={sessions.isPending}
        items={items}
        empty={t('account.noSession')}
      >
        {(rows) => (
          <ul className="list">
            {rows.map((s) => (
              <li key={s.id}>
                <span>
                  {s.current ? <strong>{t('account.thisSession')}</strong> : t('account.session')}{' '}
                  {t('account.sessionLine', {
                    when: when(s.lastUsedAt),
                    ip: s.ip ?? t('account.unknownIp'),
                    agent: s.userAgent ?? t('account.unknownAgent'),
                  })}
                </span>
                {!s.current && (
                  <button
                    type="button"
                    className="danger-quiet"
                    onClick={() => void revoke.run(s.id)}
                    aria-label={t('account.revokeSession', { when: when(s.lastUsedAt) })}
                  >
                    {t('account.revoke')}
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </List>
      {items.length > 1 && (
        <button type="button" className="danger-quiet" onClick={() => void others.run()}>
          {t('account.signOutOthers')}
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
      <h2 id="otp">{t('account.otp')}</h2>
      <ErrorBox error={otp.error ?? start.error ?? confirm.error ?? disable.error ?? renew.error} />
      {otp.isPending && <Loading what={t('account.otpWhat')} />}
      {codes && (
        <div className="callout">
          <p>{t('account.codesNow')}</p>
          <RecoveryCodes codes={codes} tenant={session.tenantCode} />
        </div>
      )}
      {otp.data && !otp.data.enrolled && !setup && (
        <>
          <p>{t('account.off')}</p>
          <button type="button" onClick={() => void start.run()}>
            {t('account.setUp')}
          </button>
        </>
      )}
      {setup && (
        <form className="stack" onSubmit={(e) => void confirm.run(codeOf(e))}>
          <p>{t('account.scan')}</p>
          <img src={qrSource(setup.qrCodeSvg)} alt={t('account.qrAlt')} width={200} height={200} />
          <p>
            {t('account.orSecret')} <code>{setup.secret}</code>
          </p>
          <label>
            {t('account.code')}
            <input name="code" autoComplete="one-time-code" inputMode="numeric" required />
          </label>
          <FormFooter submit={t('account.turnOn')} layout="stacked" />
        </form>
      )}
      {otp.data?.enrolled && (
        <>
          <p>{t('account.on', { count: otp.data.recoveryCodesLeft })}</p>
          <form
            className="row"
            aria-label={t('account.newCodes')}
            onSubmit={(e) => {
              void renew.run(codeOf(e))
              e.currentTarget.reset()
            }}
          >
            <label>
              {t('account.codeForNew')}
              <input name="code" autoComplete="one-time-code" required />
            </label>
            <FormFooter submit={t('account.renew')} layout="inline" />
          </form>
          <form className="row" onSubmit={(e) => void disable.run(codeOf(e))}>
            <label>
              {t('account.code')}
              <input name="code" autoComplete="one-time-code" required />
            </label>
            <FormFooter submit={t('account.turnOff')} layout="inline" />
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
    () => setSent(t('account.mailSent')),
  )
  return (
    <section aria-labelledby="me" className="panel">
      <h2 id="me">{t('account.you')}</h2>
      <ErrorBox error={me.error ?? verify.error} />
      {me.data && (
        <dl className="facts">
          <dt>{t('users.email')}</dt>
          <dd>
            {me.data.email ?? '—'}{' '}
            {me.data.email && (me.data.emailVerified ? t('account.verified') : t('account.notVerified'))}
          </dd>
          <dt>{t('users.username')}</dt>
          <dd>{me.data.username ?? '—'}</dd>
          <dt>{t('screen.roles')}</dt>
          <dd>{me.data.roles.join(', ') || '—'}</dd>
        </dl>
      )}
      {me.data?.email && !me.data.emailVerified && (
        <ConfirmButton
          label={t('account.verify')}
          danger={false}
          confirm={t('account.sendMail')}
          warning={t('account.willMail')}
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
      <h1>{t('screen.account')}</h1>
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
