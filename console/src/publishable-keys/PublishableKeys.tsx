import { useState } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { tessera } from '../api'
import { Link, navigate, useUrlSort } from '../router'
import { useSession } from '../session'
import { useAction } from '../action'
import { ConfirmButton } from '../ui/ConfirmButton'
import { CopyButton } from '../ui/CopyButton'
import { List, usePage } from '../ui/List'
import { PublishableKeyForm } from './PublishableKeyForm'
import { t } from '../i18n'

const LIMIT = 20

/**
 * The Keys screen's second part (contract sections 19 and 20): the tenant's publishable keys, shown whole
 * (they are public), "Create publishable key" with client-keys:create, and revoke with client-keys:revoke.
 * A key's own page (/keys/publishable/{id}) has its sign-up snippet and its edit.
 */
export function PublishableKeys() {
  const session = useSession()
  const queries = useQueryClient()
  const page = usePage(LIMIT)
  // Why its own name: the Keys screen's Client Keys list is `sort`. Why sorted in the page: the API takes no sort parameter, so List orders the page it loaded.
  const sort = useUrlSort('publishable-sort')
  const [creating, setCreating] = useState(false)
  const keys = useQuery({
    queryKey: ['publishable-keys', 'list', page.offset],
    queryFn: () =>
      tessera.GET('/api/v1/publishable-keys', {
        params: { query: { limit: page.limit, offset: page.offset } },
      }),
  })
  const revoke = useAction(
    (id: string) => tessera.POST('/api/v1/publishable-keys/{id}/revoke', { params: { path: { id } } }),
    (k) => {
      queries.setQueryData(['publishable-keys', k.id], k)
      void queries.invalidateQueries({ queryKey: ['publishable-keys', 'list'] })
    },
  )
  return (
    <section aria-labelledby="publishable-keys">
      <h2 id="publishable-keys">{t('pk.list')}</h2>
      <p className="muted">{t('pk.help')}</p>
      {session.can('client-keys:create') && !creating && (
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          {t('pk.create')}
        </button>
      )}
      {creating && (
        <PublishableKeyForm
          onClose={() => setCreating(false)}
          onSaved={(k) => navigate(`/keys/publishable/${k.id}`)}
        />
      )}
      <List
        what={t('pk.what')}
        error={keys.error ?? revoke.error}
        pending={keys.isPending}
        items={keys.data?.items}
        empty={t('pk.none')}
        page={page}
        total={keys.data?.total}
        region={t('pk.region')}
        rowKey={(k) => k.id}
        sort={sort}
        columns={[
          {
            key: 'name',
            title: t('tenants.name'),
            cell: (k) => <Link to={`/keys/publishable/${k.id}`}>{k.name}</Link>,
            sortBy: (k) => k.name,
          },
          {
            key: 'key',
            title: t('screen.key'),
            cell: (k) => (
              <>
                <span className="mono">{k.key}</span>{' '}
                <CopyButton text={k.key} name={t('pk.copyName', { name: k.name })} />
              </>
            ),
          },
          { title: t('pk.origins'), cell: (k) => k.allowedOrigins.join(', ') },
          { title: t('provider.defaultRoles'), cell: (k) => k.defaultRoles.join(', ') || '—' },
          {
            key: 'sign-ups-per-hour',
            title: t('pk.perHour'),
            cell: (k) => k.signupsPerHour,
            sortBy: (k) => k.signupsPerHour,
          },
          { key: 'status', title: t('users.status'), cell: (k) => k.status, sortBy: (k) => k.status },
          {
            title: t('tenants.actions'),
            cell: (k) => (
              // Why a div: a flex table cell loses its place in the row (its border shifts).
              <div className="row">
                {k.status === 'ACTIVE' && session.can('client-keys:update') && (
                  <Link to={`/keys/publishable/${k.id}`} aria-label={t('provider.edit', { name: k.name })}>
                    {t('tenant.edit')}
                  </Link>
                )}
                {k.status === 'ACTIVE' && session.can('client-keys:revoke') && (
                  <ConfirmButton
                    label={t('keys.revokeName', { name: k.name })}
                    confirm={t('keys.revokeNow')}
                    warning={t('pk.warning')}
                    onConfirm={() => void revoke.run(k.id)}
                  />
                )}
              </div>
            ),
          },
        ]}
      />
    </section>
  )
}
