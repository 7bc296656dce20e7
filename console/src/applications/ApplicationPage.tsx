import { useState } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { durationWords } from '../lib/durations'
import { useAction } from '../action'
import { Link, navigate } from '../router'
import { useSession } from '../session'
import { ConfirmButton } from '../ui/ConfirmButton'
import { CopyButton } from '../ui/CopyButton'
import { ErrorBox, Loading } from '../ui/feedback'
import { when } from '../ui/format'
import { ShownOnce } from '../ui/ShownOnce'
import { ClientForm } from './ClientForm'
import { QuickStart } from './QuickStart'
import { t } from '../i18n'

type OAuthClient = components['schemas']['OAuthClient']

/** How long the former secret keeps working after a rotation (the API's 0..604800 s). */
const GRACE: readonly number[] = [0, 3600, 86_400, 604_800]

function Details({ c }: { c: OAuthClient }) {
  return (
    <section aria-labelledby="client-details" className="panel">
      <h2 id="client-details">{t('user.details')}</h2>
      <dl className="facts">
        <dt>{t('app.clientId')}</dt>
        <dd>
          <span className="mono">{c.clientId}</span>{' '}
          <CopyButton text={c.clientId} name={t('app.copyClientId')} />
        </dd>
        <dt>{t('app.type')}</dt>
        <dd>{c.dynamic ? t('app.registeredItself', { type: c.type }) : c.type}</dd>
        <dt>{t('app.clientAuth')}</dt>
        <dd>{c.tokenEndpointAuthMethod}</dd>
        <dt>{t('app.redirectUris')}</dt>
        <dd>{c.redirectUris.join(', ')}</dd>
        <dt>{t('keys.scopes')}</dt>
        <dd>{c.scopes.join(', ') || '—'}</dd>
        <dt>{t('app.grantTypes')}</dt>
        <dd>{c.grantTypes.join(', ')}</dd>
        <dt>{t('app.firstParty')}</dt>
        <dd>{c.firstParty ? t('app.firstPartyYes') : t('common.no')}</dd>
        <dt>{t('user.created')}</dt>
        <dd>{when(c.createdAt)}</dd>
        <dt>{t('tenant.updated')}</dt>
        <dd>{when(c.updatedAt)}</dd>
      </dl>
    </section>
  )
}

/** The tenant's issuer and its discovery document, which every OpenID Connect client starts from. */
function Provider({ issuer }: { issuer: string }) {
  const discovery = `${issuer}/.well-known/openid-configuration`
  return (
    <section aria-labelledby="client-provider" className="panel">
      <h2 id="client-provider">{t('app.provider')}</h2>
      <dl className="facts">
        <dt>{t('app.issuer')}</dt>
        <dd>
          <span className="mono">{issuer}</span> <CopyButton text={issuer} name={t('app.copyIssuer')} />
        </dd>
        <dt>{t('app.discovery')}</dt>
        <dd>
          <span className="mono">{discovery}</span>{' '}
          <CopyButton text={discovery} name={t('app.copyDiscovery')} />
        </dd>
      </dl>
    </section>
  )
}

/** A new secret (the former one kept for a grace period) and deletion, each after a confirming click. */
function Actions({ c, onRotated }: { c: OAuthClient; onRotated: (secret: string) => void }) {
  const session = useSession()
  const queries = useQueryClient()
  const [grace, setGrace] = useState(0)
  const rotate = useAction(
    (gracePeriodSeconds: number) =>
      tessera.POST('/api/v1/oauth/clients/{id}/secret/rotate', {
        params: { path: { id: c.id } },
        body: { gracePeriodSeconds },
      }),
    (r) => {
      if (r.clientSecret) onRotated(r.clientSecret)
      void queries.invalidateQueries({ queryKey: ['oauth-clients'] })
    },
  )
  const remove = useAction(
    () => tessera.DELETE('/api/v1/oauth/clients/{id}', { params: { path: { id: c.id } } }),
    () => {
      navigate('/applications')
      // Why remove, not invalidate: a refetch of this client would be a 404, and a stale list shows it.
      queries.removeQueries({ queryKey: ['oauth-clients'] })
    },
  )
  const canRotate = c.type === 'confidential' && session.can('oauth-clients:update')
  const canDelete = session.can('oauth-clients:delete')
  if (!canRotate && !canDelete) return null
  return (
    <section aria-labelledby="client-actions" className="panel stack">
      <h2 id="client-actions">{canRotate ? t('app.rotateOrDelete') : t('user.delete')}</h2>
      {canRotate && (
        <div className="row">
          <label>
            {t('app.graceLabel')}
            <select value={grace} onChange={(e) => setGrace(Number(e.currentTarget.value))}>
              {GRACE.map((seconds) => (
                <option key={seconds} value={seconds}>
                  {seconds === 0 ? t('app.noGrace') : durationWords(seconds)}
                </option>
              ))}
            </select>
          </label>
          <ConfirmButton
            label={t('app.rotateName', { name: c.name })}
            confirm={t('keys.rotateNow')}
            warning={grace === 0 ? t('app.rotateWarning') : t('app.rotateGraceWarning')}
            onConfirm={() => void rotate.run(grace)}
          />
        </div>
      )}
      {canDelete && (
        <div className="row">
          <ConfirmButton
            label={t('user.deleteName', { name: c.name })}
            confirm={t('app.deleteNow')}
            warning={t('app.deleteWarning')}
            onConfirm={() => void remove.run()}
          />
        </div>
      )}
      <ErrorBox error={rotate.error ?? remove.error} />
    </section>
  )
}

/** One application: its details, issuer and discovery URL, settings, secret, and quick start. */
export function ApplicationPage({ id }: { id: string }) {
  const session = useSession()
  const [shown, setShown] = useState<string | null>(null)
  const client = useQuery({
    queryKey: ['oauth-clients', id],
    queryFn: () => tessera.GET('/api/v1/oauth/clients/{id}', { params: { path: { id } } }),
  })
  const c = client.data
  // Why the page's origin: the console is served by the service, whose PUBLIC_URL the issuer is under.
  const issuer = `${window.location.origin}/t/${session.tenantCode}`
  return (
    <>
      <p>
        <Link to="/applications">← {t('screen.applications')}</Link>
      </p>
      <h1>{c ? t('app.title', { name: c.name }) : t('screen.application')}</h1>
      <ErrorBox error={client.error} />
      {client.isPending && <Loading what={t('app.what')} />}
      {c && shown && (
        <ShownOnce name={c.name} value={shown} onDone={() => setShown(null)} label={t('app.secret')} />
      )}
      {c && (
        <div className="grid">
          <Details c={c} />
          <Provider issuer={issuer} />
          {session.can('oauth-clients:update') && <ClientForm c={c} />}
          <Actions c={c} onRotated={setShown} />
          <QuickStart c={c} issuer={issuer} />
        </div>
      )}
    </>
  )
}
