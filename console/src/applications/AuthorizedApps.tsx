import { useQuery, useQueryClient } from '@tanstack/react-query'
import { tessera } from '../api'
import { useAction } from '../action'
import { when } from '../ui/format'
import { List } from '../ui/List'

/** Account's "Authorized applications": what the person let sign them in, each withdrawn with "Revoke". */
export function AuthorizedApps() {
  const queries = useQueryClient()
  const grants = useQuery({
    queryKey: ['me', 'oauth-grants'],
    queryFn: () => tessera.GET('/api/v1/me/oauth/grants'),
  })
  const revoke = useAction(
    (clientId: string) =>
      tessera.DELETE('/api/v1/me/oauth/grants/{clientId}', { params: { path: { clientId } } }),
    () => void queries.invalidateQueries({ queryKey: ['me', 'oauth-grants'] }),
  )
  return (
    <section aria-labelledby="my-apps" className="panel">
      <h2 id="my-apps">Authorized applications</h2>
      <p className="muted">
        Applications you let sign you in with this account. Revoking one ends its access at once; it asks you
        again the next time.
      </p>
      <List
        what="your applications"
        error={grants.error ?? revoke.error}
        pending={grants.isPending}
        items={grants.data?.items}
        empty="No application is authorized."
      >
        {(rows) => (
          <ul className="list">
            {rows.map((g) => (
              <li key={g.clientId}>
                <span>
                  <strong>{g.name}</strong> · {g.scopes.join(', ') || 'no scope'} · authorized{' '}
                  {when(g.createdAt)}
                </span>
                <button
                  type="button"
                  disabled={revoke.pending}
                  onClick={() => void revoke.run(g.clientId)}
                  aria-label={`Revoke ${g.name}`}
                >
                  Revoke
                </button>
              </li>
            ))}
          </ul>
        )}
      </List>
    </section>
  )
}
