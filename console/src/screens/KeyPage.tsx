import { useState } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { useAction } from '../action'
import { KeyAllowlists } from '../client-keys/KeyAllowlists'
import { KeyLog, KeyUsage } from '../client-keys/KeyUsage'
import { Link } from '../router'
import { useSession } from '../session'
import { ConfirmButton } from '../ui/ConfirmButton'
import { ErrorBox, Loading } from '../ui/feedback'
import { when } from '../ui/format'
import { ShownOnce } from '../ui/ShownOnce'

type ClientKey = components['schemas']['ClientKey']

/** How long the old value keeps working after a rotation (the API's 0..604800 s). */
const GRACE: readonly [number, string][] = [
  [0, 'None: the old value stops at once'],
  [3600, '1 hour'],
  [86_400, '1 day'],
  [604_800, '7 days'],
]

/** Rotate (with a grace period for the old value) and revoke, each after a confirming click. */
function KeyActions({ k, onRotated }: { k: ClientKey; onRotated: (value: string) => void }) {
  const session = useSession()
  const queries = useQueryClient()
  const [grace, setGrace] = useState(0)
  const refresh = () => void queries.invalidateQueries({ queryKey: ['keys'] })
  const rotate = useAction(
    (gracePeriodSeconds: number) =>
      tessera.POST('/api/v1/client-keys/{id}/rotate', {
        params: { path: { id: k.id } },
        body: { gracePeriodSeconds },
      }),
    (r) => {
      onRotated(r.key)
      refresh()
    },
  )
  const revoke = useAction(
    () => tessera.POST('/api/v1/client-keys/{id}/revoke', { params: { path: { id: k.id } } }),
    refresh,
  )
  const canRotate = session.can('client-keys:update')
  const canRevoke = session.can('client-keys:revoke')
  if (k.status !== 'ACTIVE' || (!canRotate && !canRevoke)) return null
  return (
    <section aria-labelledby="key-actions" className="panel stack">
      <h2 id="key-actions">Rotate or revoke</h2>
      {canRotate && (
        <div className="row">
          <label>
            Old value keeps working for
            <select value={grace} onChange={(e) => setGrace(Number(e.currentTarget.value))}>
              {GRACE.map(([seconds, label]) => (
                <option key={seconds} value={seconds}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <ConfirmButton
            label={`Rotate ${k.name}`}
            confirm="Rotate now"
            warning={
              grace === 0
                ? 'A new value is made; the old one stops at once.'
                : 'A new value is made; the old one works until the grace period ends.'
            }
            onConfirm={() => void rotate.run(grace)}
          />
        </div>
      )}
      {canRevoke && (
        <div className="row">
          <ConfirmButton
            label={`Revoke ${k.name}`}
            confirm="Revoke now"
            warning="Calls with this key stop at once."
            onConfirm={() => void revoke.run()}
          />
        </div>
      )}
      <ErrorBox error={rotate.error ?? revoke.error} />
    </section>
  )
}

/** One Client Key: its facts, usage chart, request log and allowlists; its own URL, /keys/{id}. */
export function KeyPage({ id }: { id: string }) {
  const [shown, setShown] = useState<string | null>(null)
  const key = useQuery({
    queryKey: ['keys', id],
    queryFn: () => tessera.GET('/api/v1/client-keys/{id}', { params: { path: { id } } }),
  })
  const k = key.data
  return (
    <>
      <p>
        <Link to="/keys">← Keys</Link>
      </p>
      <h1>{k ? `Key ${k.name}` : 'Key'}</h1>
      <ErrorBox error={key.error} />
      {key.isPending && <Loading what="the key" />}
      {k && shown && <ShownOnce name={k.name} value={shown} onDone={() => setShown(null)} />}
      {k && (
        <div className="grid">
          <section aria-labelledby="key-details" className="panel">
            <h2 id="key-details">Details</h2>
            <dl className="facts">
              <dt>Status</dt>
              <dd>{k.status}</dd>
              <dt>Prefix</dt>
              <dd className="mono">{k.prefix}…</dd>
              <dt>Scopes</dt>
              <dd>{k.scopes.join(', ') || '—'}</dd>
              <dt>Created</dt>
              <dd>{when(k.createdAt)}</dd>
              <dt>Last used</dt>
              <dd>{when(k.lastUsedAt)}</dd>
              <dt>Expires</dt>
              <dd>{k.expiresAt ? when(k.expiresAt) : 'Never'}</dd>
            </dl>
          </section>
          <KeyActions k={k} onRotated={setShown} />
          <KeyAllowlists k={k} />
          <KeyUsage id={id} />
          <KeyLog id={id} />
        </div>
      )}
    </>
  )
}
