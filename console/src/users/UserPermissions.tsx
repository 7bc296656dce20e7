import { useQuery, useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { usePermissionNames } from '../permission-names'
import { useSession } from '../session'
import { useAction } from '../action'
import { Empty, ErrorBox, Loading } from '../ui/feedback'
import { FormFooter } from '../ui/FormFooter'

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
      <h2 id="perms">Permissions</h2>
      <ErrorBox error={perms.error} />
      {perms.isPending ? (
        <Loading what="permissions" />
      ) : (
        perms.data && (
          <>
            <h3>Granted directly</h3>
            {direct.length === 0 ? (
              <Empty>None.</Empty>
            ) : (
              <ul className="chips">
                {direct.map((p) => (
                  <li key={p}>
                    {p}
                    {canRevoke && (
                      <button
                        type="button"
                        onClick={() => void revoke.run(p)}
                        aria-label={`Revoke permission ${p}`}
                        disabled={revoke.pending}
                      >
                        Revoke
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
                  Permission to grant
                  <select name="permission">
                    {grantable.map((p) => (
                      <option key={p} value={p}>
                        {p}
                      </option>
                    ))}
                  </select>
                </label>
                <FormFooter submit="Grant permission" pending={grant.pending} layout="inline" />
              </form>
            )}
            <ErrorBox error={grant.error ?? revoke.error ?? known.error} />
            {perms.data.fromRoles.length > 0 && (
              <>
                <h3>From roles</h3>
                <ul>
                  {perms.data.fromRoles.map((r) => (
                    <li key={r.role}>
                      {r.role}: {r.permissions.length ? r.permissions.join(', ') : 'none'}
                    </li>
                  ))}
                </ul>
              </>
            )}
            <h3>Effective</h3>
            {perms.data.effective.length === 0 ? (
              <Empty>None.</Empty>
            ) : (
              <p>{perms.data.effective.join(', ')}</p>
            )}
          </>
        )
      )}
    </section>
  )
}
