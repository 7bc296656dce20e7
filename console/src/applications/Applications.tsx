import { useState } from 'react'
import { useQuery } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { Link, navigate, useUrlSort } from '../router'
import { useSession } from '../session'
import { when } from '../ui/format'
import { List, usePage } from '../ui/List'
import { ShownOnce } from '../ui/ShownOnce'
import { ClientForm } from './ClientForm'
import { t } from '../i18n'

type Created = components['schemas']['OAuthClientWithSecret']

const LIMIT = 20

/** The Applications screen: the tenant's OAuth clients, and a new one with its secret shown once. */
export function Applications() {
  const session = useSession()
  const page = usePage(LIMIT)
  // Why sorted in the page: the API takes no sort parameter, so List orders the page it loaded.
  const sort = useUrlSort()
  const [creating, setCreating] = useState(false)
  const [created, setCreated] = useState<Created | null>(null)
  const clients = useQuery({
    queryKey: ['oauth-clients', 'list', page.offset],
    queryFn: () =>
      tessera.GET('/api/v1/oauth/clients', {
        params: { query: { limit: page.limit, offset: page.offset } },
      }),
  })
  const open = (c: Created) => navigate(`/applications/${c.id}`)
  return (
    <>
      <h1>{t('screen.applications')}</h1>
      <p className="muted">{t('apps.help')}</p>
      {created?.clientSecret && (
        <ShownOnce
          name={created.name}
          value={created.clientSecret}
          onDone={() => open(created)}
          label={t('app.secret')}
        />
      )}
      {session.can('oauth-clients:create') && !creating && !created && (
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          {t('apps.create')}
        </button>
      )}
      {creating && (
        <ClientForm
          onClose={() => setCreating(false)}
          onCreated={(c) => {
            setCreating(false)
            // Why stay for a confidential client: its secret is shown only here, before its own page.
            if (c.clientSecret) setCreated(c)
            else open(c)
          }}
        />
      )}
      <List
        what={t('apps.what')}
        error={clients.error}
        pending={clients.isPending}
        items={clients.data?.items}
        empty={t('apps.none')}
        page={page}
        total={clients.data?.total}
        rowKey={(c) => c.id}
        sort={sort}
        columns={[
          {
            key: 'name',
            title: t('tenants.name'),
            cell: (c) => <Link to={`/applications/${c.id}`}>{c.name}</Link>,
            sortBy: (c) => c.name,
          },
          {
            key: 'client-id',
            title: t('app.clientId'),
            cell: (c) => c.clientId,
            className: 'mono',
            sortBy: (c) => c.clientId,
          },
          {
            key: 'type',
            title: t('app.type'),
            cell: (c) => (c.dynamic ? t('apps.registeredItself', { type: c.type }) : c.type),
            sortBy: (c) => c.type,
          },
          { title: t('app.redirectUris'), cell: (c) => c.redirectUris.join(', ') },
          { title: t('keys.scopes'), cell: (c) => c.scopes.join(', ') || '—' },
          {
            key: 'created',
            title: t('user.created'),
            cell: (c) => when(c.createdAt),
            sortBy: (c) => c.createdAt,
          },
        ]}
      />
    </>
  )
}
