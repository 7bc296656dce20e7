import { useState } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { tessera } from '../api'
import { useSession } from '../session'
import { useAction } from '../action'
import { ConfirmButton } from '../ui/ConfirmButton'
import { List } from '../ui/List'
import { PasskeyError, PasskeyFacts, PasskeysOff, passkeysOff, usePasskeysOn } from './common'
import { t } from '../i18n'

/**
 * A user's page → Passkeys (contract sections 19 and 21), for administrators: the user's passkeys
 * (users:read) and "Remove" (users:update; the service applies the hierarchy rule).
 */
export function UserPasskeys({ userId }: { userId: string }) {
  const session = useSession()
  const queries = useQueryClient()
  const key = ['users', userId, 'passkeys']
  const [done, setDone] = useState('')
  const on = usePasskeysOn()
  const list = useQuery({
    enabled: on === true,
    queryKey: key,
    queryFn: () =>
      tessera.GET('/api/v1/users/{userId}/passkeys', {
        params: { path: { userId }, query: { limit: 100 } },
      }),
  })
  const remove = useAction(
    (id: string) =>
      tessera.DELETE('/api/v1/users/{userId}/passkeys/{id}', { params: { path: { userId, id } } }),
    () => {
      setDone(t('passkey.removed'))
      void queries.invalidateQueries({ queryKey: key })
    },
  )
  const items = list.data?.items ?? []
  const total = list.data?.total ?? 0
  const removable = session.can('users:update')
  return (
    <section aria-labelledby="user-passkeys" className="panel">
      <h2 id="user-passkeys">{t('passkey.title')}</h2>
      {on === false || passkeysOff(list.error) ? (
        <PasskeysOff />
      ) : (
        <>
          <List
            what={t('passkey.what')}
            error={list.error ?? remove.error}
            showError={(error) => <PasskeyError error={error} />}
            pending={list.isPending}
            items={items}
            empty={list.error ? null : t('passkey.none')}
          >
            {(passkeys) => (
              <ul className="list">
                {passkeys.map((p) => (
                  <li key={p.id}>
                    <PasskeyFacts passkey={p} />
                    {removable && (
                      <ConfirmButton
                        label={t('passkey.removeName', { name: p.name })}
                        confirm={t('passkey.removeNow')}
                        warning={t('passkey.userWarning')}
                        onConfirm={() => void remove.run(p.id)}
                      />
                    )}
                  </li>
                ))}
              </ul>
            )}
          </List>
          {total > items.length && (
            <p className="muted">{t('passkey.newestOf', { shown: items.length, count: total })}</p>
          )}
          <p role="status">{done}</p>
        </>
      )}
    </section>
  )
}
