import { useState } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { tessera } from '../api'
import { Link, navigate } from '../router'
import { useSession } from '../session'
import { ConfirmButton, Empty, ErrorBox, Loading, Pager, useAction } from '../ui'
import { CopyButton } from './CopyButton'
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
  const [offset, setOffset] = useState(0)
  const [creating, setCreating] = useState(false)
  const keys = useQuery({
    queryKey: ['publishable-keys', 'list', offset],
    queryFn: () => tessera.GET('/api/v1/publishable-keys', { params: { query: { limit: LIMIT, offset } } }),
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
        <button type="button" onClick={() => setCreating(true)}>
          Create publishable key
        </button>
      )}
      {creating && (
        <PublishableKeyForm
          onClose={() => setCreating(false)}
          onSaved={(k) => navigate(`/keys/publishable/${k.id}`)}
        />
      )}
      <ErrorBox error={keys.error ?? revoke.error} />
      {keys.isPending ? (
        <Loading what="publishable keys" />
      ) : keys.data && keys.data.items.length === 0 ? (
        <Empty>No publishable key yet.</Empty>
      ) : (
        keys.data && (
          <>
            {/* Why focusable: the table is wider than a phone, and a keyboard user must be able to scroll it. */}
            <div className="scroll" tabIndex={0} role="region" aria-label="Publishable keys, scrollable">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Key</th>
                    <th scope="col">Allowed origins</th>
                    <th scope="col">Default roles</th>
                    <th scope="col">Sign-ups per hour</th>
                    <th scope="col">Status</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {keys.data.items.map((k) => (
                    <tr key={k.id}>
                      <td>
                        <Link to={`/keys/publishable/${k.id}`}>{k.name}</Link>
                      </td>
                      <td>
                        <span className="mono">{k.key}</span>{' '}
                        <CopyButton text={k.key} name={`Copy ${k.name}`} />
                      </td>
                      <td>{k.allowedOrigins.join(', ')}</td>
                      <td>{k.defaultRoles.join(', ') || '—'}</td>
                      <td>{k.signupsPerHour}</td>
                      <td>{k.status}</td>
                      <td>
                        {/* Why a div: a flex table cell loses its place in the row (its border shifts). */}
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
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager total={keys.data.total} limit={LIMIT} offset={offset} onOffset={setOffset} />
          </>
        )
      )}
    </section>
  )
}
