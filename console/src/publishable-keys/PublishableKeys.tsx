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
      <h2 id="publishable-keys">Publishable keys</h2>
      <p className="muted">
        A publishable key lets a web page of yours sign users up straight from the browser, behind a proof of
        work. It is public: it goes in the page, and it is good for nothing but sign-up.
      </p>
      {session.can('client-keys:create') && !creating && (
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          Create publishable key
        </button>
      )}
      {creating && (
        <PublishableKeyForm
          onClose={() => setCreating(false)}
          onSaved={(k) => navigate(`/keys/publishable/${k.id}`)}
        />
      )}
      <List
        what="publishable keys"
        error={keys.error ?? revoke.error}
        pending={keys.isPending}
        items={keys.data?.items}
        empty="No publishable key yet."
        page={page}
        total={keys.data?.total}
        region="Publishable keys, scrollable"
        rowKey={(k) => k.id}
        sort={sort}
        columns={[
          {
            title: 'Name',
            cell: (k) => <Link to={`/keys/publishable/${k.id}`}>{k.name}</Link>,
            sortBy: (k) => k.name,
          },
          {
            title: 'Key',
            cell: (k) => (
              <>
                <span className="mono">{k.key}</span> <CopyButton text={k.key} name={`Copy ${k.name}`} />
              </>
            ),
          },
          { title: 'Allowed origins', cell: (k) => k.allowedOrigins.join(', ') },
          { title: 'Default roles', cell: (k) => k.defaultRoles.join(', ') || '—' },
          { title: 'Sign-ups per hour', cell: (k) => k.signupsPerHour, sortBy: (k) => k.signupsPerHour },
          { title: 'Status', cell: (k) => k.status, sortBy: (k) => k.status },
          {
            title: 'Actions',
            cell: (k) => (
              // Why a div: a flex table cell loses its place in the row (its border shifts).
              <div className="row">
                {k.status === 'ACTIVE' && session.can('client-keys:update') && (
                  <Link to={`/keys/publishable/${k.id}`} aria-label={`Edit ${k.name}`}>
                    Edit
                  </Link>
                )}
                {k.status === 'ACTIVE' && session.can('client-keys:revoke') && (
                  <ConfirmButton
                    label={`Revoke ${k.name}`}
                    confirm="Revoke now"
                    warning="Sign-ups with this key stop at once."
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
