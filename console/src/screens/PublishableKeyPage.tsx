import { useQuery, useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { useAction } from '../action'
import { PublishableKeyForm } from '../publishable-keys/PublishableKeyForm'
import { SignupSnippet } from '../publishable-keys/SignupSnippet'
import { Link } from '../router'
import { useSession } from '../session'
import { ConfirmButton } from '../ui/ConfirmButton'
import { CopyButton } from '../ui/CopyButton'
import { ErrorBox, Loading } from '../ui/feedback'
import { when } from '../ui/format'
import { t } from '../i18n'

type PublishableKey = components['schemas']['PublishableKey']

function Revoke({ k }: { k: PublishableKey }) {
  const queries = useQueryClient()
  const revoke = useAction(
    () => tessera.POST('/api/v1/publishable-keys/{id}/revoke', { params: { path: { id: k.id } } }),
    (revoked) => {
      queries.setQueryData(['publishable-keys', k.id], revoked)
      void queries.invalidateQueries({ queryKey: ['publishable-keys', 'list'] })
    },
  )
  return (
    <section aria-labelledby="pk-revoke" className="panel stack">
      <h2 id="pk-revoke">{t('account.revoke')}</h2>
      <p className="muted">{t('pk.revokeHelp')}</p>
      <div className="row">
        <ConfirmButton
          label={t('keys.revokeName', { name: k.name })}
          confirm={t('keys.revokeNow')}
          warning={t('pk.warning')}
          onConfirm={() => void revoke.run()}
        />
      </div>
      <ErrorBox error={revoke.error} />
    </section>
  )
}

/**
 * One publishable key: its facts, its sign-up snippet while it is active, its edit (client-keys:update)
 * and revoke (client-keys:revoke); its own URL, /keys/publishable/{id}.
 */
export function PublishableKeyPage({ id }: { id: string }) {
  const session = useSession()
  const key = useQuery({
    queryKey: ['publishable-keys', id],
    queryFn: () => tessera.GET('/api/v1/publishable-keys/{id}', { params: { path: { id } } }),
  })
  const k = key.data
  const active = k?.status === 'ACTIVE'
  return (
    <>
      <p>
        <Link to="/keys">← {t('screen.keys')}</Link>
      </p>
      <h1>{k ? t('pk.title', { name: k.name }) : t('screen.publishableKey')}</h1>
      <ErrorBox error={key.error} />
      {key.isPending && <Loading what={t('keys.keyWhat')} />}
      {k && (
        <div className="grid">
          <section aria-labelledby="pk-details" className="panel">
            <h2 id="pk-details">{t('user.details')}</h2>
            <dl className="facts">
              <dt>{t('users.status')}</dt>
              <dd>{k.status}</dd>
              <dt>{t('screen.key')}</dt>
              <dd>
                <span className="mono">{k.key}</span> <CopyButton text={k.key} />
              </dd>
              <dt>{t('pk.origins')}</dt>
              <dd>{k.allowedOrigins.join(', ')}</dd>
              <dt>{t('provider.defaultRoles')}</dt>
              <dd>{k.defaultRoles.join(', ') || t('form.none')}</dd>
              <dt>{t('pk.perHour')}</dt>
              <dd>{k.signupsPerHour}</dd>
              <dt>{t('user.created')}</dt>
              <dd>{when(k.createdAt)}</dd>
              {k.revokedAt && (
                <>
                  <dt>{t('pk.revoked')}</dt>
                  <dd>{when(k.revokedAt)}</dd>
                </>
              )}
            </dl>
          </section>
          {active && session.can('client-keys:update') && (
            <PublishableKeyForm k={k} onSaved={() => undefined} />
          )}
          {active && session.can('client-keys:revoke') && <Revoke k={k} />}
          {active && <SignupSnippet k={k} />}
        </div>
      )}
    </>
  )
}
