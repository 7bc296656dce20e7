import { useState } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { durationWords } from '../lib/durations'
import { useAction } from '../action'
import { KeyAllowlists } from '../client-keys/KeyAllowlists'
import { KeyLog, KeyUsage } from '../client-keys/KeyUsage'
import { Link } from '../router'
import { useSession } from '../session'
import { ConfirmButton } from '../ui/ConfirmButton'
import { ErrorBox, Loading } from '../ui/feedback'
import { when } from '../ui/format'
import { ShownOnce } from '../ui/ShownOnce'
import { t } from '../i18n'

type ClientKey = components['schemas']['ClientKey']

/** How long the old value keeps working after a rotation (the API's 0..604800 s). */
/** The grace periods offered, in seconds; none, or a duration in words (lib/durations.ts). */
const GRACE: readonly number[] = [0, 3600, 86_400, 604_800]

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
      <h2 id="key-actions">{t('keys.actions')}</h2>
      {canRotate && (
        <div className="row">
          <label>
            {t('keys.graceLabel')}
            <select value={grace} onChange={(e) => setGrace(Number(e.currentTarget.value))}>
              {GRACE.map((seconds) => (
                <option key={seconds} value={seconds}>
                  {seconds === 0 ? t('keys.noGrace') : durationWords(seconds)}
                </option>
              ))}
            </select>
          </label>
          <ConfirmButton
            label={t('keys.rotateName', { name: k.name })}
            confirm={t('keys.rotateNow')}
            warning={grace === 0 ? t('keys.rotateWarning') : t('keys.rotateGraceWarning')}
            onConfirm={() => void rotate.run(grace)}
          />
        </div>
      )}
      {canRevoke && (
        <div className="row">
          <ConfirmButton
            label={t('keys.revokeName', { name: k.name })}
            confirm={t('keys.revokeNow')}
            warning={t('keys.revokeWarning')}
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
        <Link to="/keys">← {t('screen.keys')}</Link>
      </p>
      <h1>{k ? t('keys.title', { name: k.name }) : t('screen.key')}</h1>
      <ErrorBox error={key.error} />
      {key.isPending && <Loading what={t('keys.keyWhat')} />}
      {k && shown && <ShownOnce name={k.name} value={shown} onDone={() => setShown(null)} />}
      {k && (
        <div className="grid">
          <section aria-labelledby="key-details" className="panel">
            <h2 id="key-details">{t('user.details')}</h2>
            <dl className="facts">
              <dt>{t('users.status')}</dt>
              <dd>{k.status}</dd>
              <dt>{t('keys.prefix')}</dt>
              <dd className="mono">{k.prefix}…</dd>
              <dt>{t('keys.scopes')}</dt>
              <dd>{k.scopes.join(', ') || '—'}</dd>
              <dt>{t('user.created')}</dt>
              <dd>{when(k.createdAt)}</dd>
              <dt>{t('keys.lastUsed')}</dt>
              <dd>{when(k.lastUsedAt)}</dd>
              <dt>{t('keys.expires')}</dt>
              <dd>{k.expiresAt ? when(k.expiresAt) : t('keys.never')}</dd>
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
