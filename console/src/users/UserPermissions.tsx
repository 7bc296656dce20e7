import { useQuery, useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { usePermissionNames } from '../permission-names'
import { useSession } from '../session'
import { useAction } from '../action'
import { Empty, ErrorBox, Loading } from '../ui/feedback'
import { FormFooter } from '../ui/FormFooter'
import { t } from '../i18n'

type User = components['schemas']['User']

/**
 * The user's permissions: those granted directly (grant with `permissions:grant`, revoke with
 * `permissions:revoke`), those each role brings, and the effective union.
 */
export function UserPermissions({ user }: { user: User }) {
  const session = useSession()
  const queries = useQueryClient()
  const key = ['users', user.id, 'permissions']
  const perms = useQuery({
    queryKey: key,
    queryFn: () =>
      tessera.GET('/api/v1/permissions/user/{userId}', { params: { path: { userId: user.id } } }),
  })
  // Why set the answer: both operations answer the user's permissions after the change.
  const settle = (after: components['schemas']['UserPermissions']) => queries.setQueryData(key, after)
  const grant = useAction(
    (permission: string) =>
      tessera.POST('/api/v1/permissions/grant', { body: { userId: user.id, permission } }),
    settle,
  )
  const revoke = useAction(
    (permission: string) =>
      tessera.POST('/api/v1/permissions/revoke', { body: { userId: user.id, permission } }),
    settle,
  )
  const canGrant = session.can('permissions:grant')
  const canRevoke = session.can('permissions:revoke')
  const known = usePermissionNames()
  const direct = perms.data?.direct ?? []
  const grantable = known.names.filter((p) => !direct.includes(p)).sort()
  return (
    <section aria-labelledby="perms" className="panel">
      <h2 id="perms">{t('screen.permissions')}</h2>
      <ErrorBox error={perms.error} />
      {perms.isPending ? (
        <Loading what={t('role.permsWhat')} />
      ) : (
        perms.data && (
          <>
            <h3>{t('perms.direct')}</h3>
            {direct.length === 0 ? (
              <Empty>{t('role.none')}</Empty>
            ) : (
              <ul className="chips">
                {direct.map((p) => (
                  <li key={p}>
                    {p}
                    {canRevoke && (
                      <button
                        type="button"
                        onClick={() => void revoke.run(p)}
                        aria-label={t('perms.revokeName', { name: p })}
                        disabled={revoke.pending}
                      >
                        {t('account.revoke')}
                      </button>
                    )}
                  </li>
                ))}
              </ul>
            )}
            {canGrant && grantable.length > 0 && (
              <form
                className="row"
                onSubmit={(e) => {
                  e.preventDefault()
                  void grant.run(String(new FormData(e.currentTarget).get('permission')))
                }}
              >
                <label>
                  {t('perms.toGrant')}
                  <select name="permission">
                    {grantable.map((p) => (
                      <option key={p} value={p}>
                        {p}
                      </option>
                    ))}
                  </select>
                </label>
                <FormFooter submit={t('perms.grant')} pending={grant.pending} layout="inline" />
              </form>
            )}
            <ErrorBox error={grant.error ?? revoke.error ?? known.error} />
            {perms.data.fromRoles.length > 0 && (
              <>
                <h3>{t('perms.fromRoles')}</h3>
                <ul>
                  {perms.data.fromRoles.map((r) => (
                    <li key={r.role}>
                      {r.role}: {r.permissions.length ? r.permissions.join(', ') : t('perms.none')}
                    </li>
                  ))}
                </ul>
              </>
            )}
            <h3>{t('perms.effective')}</h3>
            {perms.data.effective.length === 0 ? (
              <Empty>{t('role.none')}</Empty>
            ) : (
              <p>{perms.data.effective.join(', ')}</p>
            )}
          </>
        )
      )}
    </section>
  )
}
