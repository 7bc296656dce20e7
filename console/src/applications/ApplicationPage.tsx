import { useState } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
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

type OAuthClient = components['schemas']['OAuthClient']

/** How long the former secret keeps working after a rotation (the API's 0..604800 s). */
const GRACE: readonly [number, string][] = [
  [0, 'None: the old secret stops at once'],
  [3600, '1 hour'],
  [86_400, '1 day'],
  [604_800, '7 days'],
]

function Details({ c }: { c: OAuthClient }) {
  return (
    <section aria-labelledby="client-details" className="panel">
      <h2 id="client-details">Details</h2>
      <dl className="facts">
        <dt>Client ID</dt>
        <dd>
          <span className="mono">{c.clientId}</span> <CopyButton text={c.clientId} name="Copy client ID" />
        </dd>
        <dt>Type</dt>
        <dd>{c.dynamic ? `${c.type}, registered itself` : c.type}</dd>
        <dt>Client authentication</dt>
        <dd>{c.tokenEndpointAuthMethod}</dd>
        <dt>Redirect URIs</dt>
        <dd>{c.redirectUris.join(', ')}</dd>
        <dt>Scopes</dt>
        <dd>{c.scopes.join(', ') || '—'}</dd>
        <dt>Grant types</dt>
        <dd>{c.grantTypes.join(', ')}</dd>
        <dt>First party</dt>
        <dd>{c.firstParty ? 'Yes: no consent asked' : 'No'}</dd>
        <dt>Created</dt>
        <dd>{when(c.createdAt)}</dd>
        <dt>Updated</dt>
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
      <h2 id="client-provider">OpenID provider</h2>
      <dl className="facts">
        <dt>Issuer</dt>
        <dd>
          <span className="mono">{issuer}</span> <CopyButton text={issuer} name="Copy issuer" />
        </dd>
        <dt>Discovery URL</dt>
        <dd>
          <span className="mono">{discovery}</span> <CopyButton text={discovery} name="Copy discovery URL" />
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
      <h2 id="client-actions">{canRotate ? 'Rotate the secret or delete' : 'Delete'}</h2>
      {canRotate && (
        <div className="row">
          <label>
            Old secret keeps working for
            <select value={grace} onChange={(e) => setGrace(Number(e.currentTarget.value))}>
              {GRACE.map(([seconds, label]) => (
                <option key={seconds} value={seconds}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <ConfirmButton
            label={`Rotate the secret of ${c.name}`}
            confirm="Rotate now"
            warning={
              grace === 0
                ? 'A new secret is made; the old one stops at once.'
                : 'A new secret is made; the old one works until the grace period ends.'
            }
            onConfirm={() => void rotate.run(grace)}
          />
        </div>
      )}
      {canDelete && (
        <div className="row">
          <ConfirmButton
            label={`Delete ${c.name}`}
            confirm="Delete now"
            warning="Every grant and token of this application ends at once."
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
        <Link to="/applications">← Applications</Link>
      </p>
      <h1>{c ? `Application ${c.name}` : 'Application'}</h1>
      <ErrorBox error={client.error} />
      {client.isPending && <Loading what="the application" />}
      {c && shown && (
        <ShownOnce name={c.name} value={shown} onDone={() => setShown(null)} label="Client secret" />
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
