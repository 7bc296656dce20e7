import { useState } from 'react'
import { useQuery } from '@tanstack/react-query'
import { tessera } from '../api'
import { CreateRole } from '../roles/CreateRole'
import { Link } from '../router'
import { useSession } from '../session'
import { Empty, ErrorBox, Loading, Pager } from '../ui'

const LIMIT = 50

export function Roles() {
  const session = useSession()
  const [offset, setOffset] = useState(0)
  const [creating, setCreating] = useState(false)
  const roles = useQuery({
    queryKey: ['roles', offset],
    queryFn: () => tessera.GET('/api/v1/roles', { params: { query: { limit: LIMIT, offset } } }),
  })
  return (
    <>
      <h1>Roles</h1>
      <p className="muted">
        A role gives its permissions to every user who holds it. A user may manage only roles below their own
        level.
      </p>
      {session.can('roles:create') && !creating && (
        <button type="button" onClick={() => setCreating(true)}>
          Create role
        </button>
      )}
      {creating && <CreateRole onClose={() => setCreating(false)} />}
      <ErrorBox error={roles.error} />
      {roles.isPending ? (
        <Loading what="roles" />
      ) : roles.data && roles.data.items.length === 0 ? (
        <Empty>No role yet.</Empty>
      ) : (
        roles.data && (
          <>
            <div className="scroll">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Role</th>
                    <th scope="col">Level</th>
                    <th scope="col">Permissions</th>
                  </tr>
                </thead>
                <tbody>
                  {roles.data.items.map((r) => (
                    <tr key={r.id}>
                      <td>
                        <Link to={`/roles/${r.id}`}>{r.name}</Link>
                        {r.isSystem && <span className="muted"> (built in)</span>}
                        {r.description && <div className="muted">{r.description}</div>}
                      </td>
                      <td>{r.level}</td>
                      <td>{r.permissions.length ? r.permissions.join(', ') : '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager total={roles.data.total} limit={LIMIT} offset={offset} onOffset={setOffset} />
          </>
        )
      )}
    </>
  )
}
