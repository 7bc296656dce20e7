import { useQuery, useQueryClient } from '@tanstack/react-query'
import { tessera } from '../api'
import { useAction } from '../action'
import { when } from '../ui/format'
import { List } from '../ui/List'
import { t } from '../i18n'

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
      <h2 id="my-apps">{t('authorized.title')}</h2>
      <p className="muted">{t('authorized.help')}</p>
      <List
        what={t('authorized.what')}
        error={grants.error ?? revoke.error}
        pending={grants.isPending}
        items={grants.data?.items}
        empty={t('authorized.none')}
      >
        {(rows) => (
          <ul className="list">
            {rows.map((g) => (
              <li key={g.clientId}>
                <span>
                  <strong>{g.name}</strong> ·{' '}
                  {t('authorized.line', {
                    scopes: g.scopes.join(', ') || t('authorized.noScope'),
                    when: when(g.createdAt),
                  })}
                </span>
                <button
                  type="button"
                  disabled={revoke.pending}
                  onClick={() => void revoke.run(g.clientId)}
                  aria-label={t('keys.revokeName', { name: g.name })}
                >
                  {t('account.revoke')}
                </button>
              </li>
            ))}
          </ul>
        )}
      </List>
    </section>
  )
}
