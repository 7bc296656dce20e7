import { useState, type FormEvent } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { authConfigPatch } from 'virtual:tessera-schemas'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { bodyIssuesOf, changes, validate } from '../lib/schema'
import { durationMessage } from '../lib/durations'
import { SchemaFields, labelAt, setAt } from '../SchemaForm'
import { SECTIONS, isDuration } from '../settings/words'
import { useSession } from '../session'
import { useAction } from '../action'
import { ConfirmButton } from '../ui/ConfirmButton'
import { ErrorBox, Loading } from '../ui/feedback'
import { FormFooter } from '../ui/FormFooter'
import { Link } from '../router'
import { t } from '../i18n'

type Obj = Record<string, unknown>
type AuthConfigPatch = components['schemas']['AuthConfigPatch']

function ConfigForm({ tenantId, current }: { tenantId: string; current: Obj }) {
  const session = useSession()
  const queries = useQueryClient()
  const [draft, setDraft] = useState<Obj>(current)
  const [issues, setIssues] = useState<Map<string, string>>(new Map())
  const [saved, setSaved] = useState('')
  const save = useAction(
    // Why the cast: `body` has just been checked against AuthConfigPatch itself (validate, below).
    (body: Obj) =>
      tessera.PATCH('/api/v1/tenants/{id}/config', {
        params: { path: { id: tenantId } },
        body: body as AuthConfigPatch,
      }),
    (_answer, body) => {
      setSaved(
        t('settings.saved', {
          changed: Object.keys(body)
            .map((k) => labelAt(`/${k}`))
            .join(', '),
        }),
      )
      void queries.invalidateQueries({ queryKey: ['tenant'] })
      // The sign-in page's branding is kept a minute; after a change here, it shows the new one at once.
      void queries.invalidateQueries({ queryKey: ['login-branding'] })
    },
  )
  // Why: only the platform may set rate limits (the service answers FORBIDDEN to anyone else).
  const skip = session.can('admin:*') ? [] : ['rateLimits']
  // The service's refusal of a field (a bound the form's copy of the schema did not know) shows as the form's own.
  const refused = bodyIssuesOf(save.error)
  const shown = refused.length > 0 ? new Map(refused.map((i) => [i.path, i.message])) : issues
  const submit = (e: FormEvent) => {
    e.preventDefault()
    setSaved('')
    const patch = changes(current, draft, authConfigPatch)
    const found = validate(authConfigPatch, patch)
    setIssues(new Map(found.map((i) => [i.path, i.message])))
    if (found.length > 0) return
    if (Object.keys(patch).length === 0) {
      setSaved(t('settings.nothing'))
      return
    }
    void save.run(patch)
  }
  return (
    <form onSubmit={submit} className="stack settings" noValidate>
      {shown.size > 0 && (
        <div role="alert" className="error">
          <p>{t('settings.invalid')}</p>
          <ul>
            {[...shown].map(([path, message]) => (
              <li key={path}>
                {path
                  .split('/')
                  .filter(Boolean)
                  .map((_, i, parts) => labelAt(`/${parts.slice(0, i + 1).join('/')}`))
                  .join(' › ')}{' '}
                {isDuration(path) ? durationMessage(message) : message}
              </li>
            ))}
          </ul>
        </div>
      )}
      {SECTIONS.map((section) => (
        <section key={section.id} aria-labelledby={`settings-${section.id}`} className="settings-section">
          <h3 id={`settings-${section.id}`}>{t(section.title)}</h3>
          <SchemaFields
            schema={authConfigPatch}
            value={draft}
            only={section.keys}
            skip={skip}
            errors={shown}
            onChange={(path, value) => setDraft((d) => setAt(d, path, value))}
          />
        </section>
      ))}
      <FormFooter
        submit={session.can('tenants:update') ? t('settings.save') : undefined}
        error={refused.length > 0 ? null : save.error}
        pending={save.pending}
        status={saved}
        layout="stacked"
      />
    </form>
  )
}

function Rotation() {
  const [done, setDone] = useState('')
  const secret = useAction(
    () => tessera.POST('/api/v1/tenants/me/jwt-secret/generate'),
    () => setDone(t('settings.secretDone')),
  )
  const key = useAction(
    () => tessera.POST('/api/v1/tenants/me/signing-keys/rotate'),
    (k) => setDone(t('settings.keyDone', { kid: k.kid })),
  )
  return (
    <section aria-labelledby="rotation" className="panel">
      <h2 id="rotation">{t('settings.rotation')}</h2>
      <p className="muted">{t('settings.rotateWhen')}</p>
      <ul className="muted">
        <li>{t('settings.secretHelp')}</li>
        <li>{t('settings.keyHelp')}</li>
      </ul>
      <div className="row">
        <ConfirmButton
          label={t('settings.rotateSecret')}
          danger={false}
          confirm={t('settings.rotateSecretNow')}
          onConfirm={() => void secret.run()}
        />
        <ConfirmButton
          label={t('settings.rotateKey')}
          danger={false}
          confirm={t('settings.rotateKeyNow')}
          onConfirm={() => void key.run()}
        />
      </div>
      <p role="status">{done}</p>
      <ErrorBox error={secret.error ?? key.error} />
    </section>
  )
}

export function Settings() {
  const session = useSession()
  const tenant = useQuery({ queryKey: ['tenant', 'me'], queryFn: () => tessera.GET('/api/v1/tenants/me') })
  return (
    <>
      <h1>{t('screen.settings')}</h1>
      <ErrorBox error={tenant.error} />
      {tenant.isPending && <Loading what={t('settings.what')} />}
      {tenant.data && (
        <>
          <p>
            {t('screen.tenant')} <strong>{tenant.data.name}</strong> (<code>{tenant.data.code}</code>),{' '}
            {tenant.data.status}
          </p>
          <section aria-labelledby="auth-config" className="panel">
            <h2 id="auth-config">{t('settings.auth')}</h2>
            <ConfigForm tenantId={tenant.data.id} current={tenant.data.auth_config as unknown as Obj} />
          </section>
          {session.can('tenants:update') && <Rotation />}
          {session.can('identity-providers:read') && (
            <section aria-labelledby="identity-providers" className="panel">
              <h2 id="identity-providers">{t('screen.identityProviders')}</h2>
              <p className="muted">{t('settings.idpHelp')}</p>
              <Link to="/settings/identity-providers">{t('settings.manageIdp')}</Link>
            </section>
          )}
        </>
      )}
    </>
  )
}
