import { useState, type FormEvent } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { tessera } from '../api'
import { Link, navigate } from '../router'
import { useSession } from '../session'
import { Empty, ErrorBox, Loading, Pager, useAction, when } from '../ui'

const LIMIT = 20

function CreateUser({ onClose }: { onClose: () => void }) {
  const queries = useQueryClient()
  const create = useAction(
    (body: { email?: string; username?: string; password: string }) =>
      tessera.POST('/api/v1/register', { body }),
    (user) => {
      void queries.invalidateQueries({ queryKey: ['users'] })
      navigate(`/users/${user.id}`)
    },
  )
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const f = new FormData(e.currentTarget)
    const email = String(f.get('email')).trim()
    const username = String(f.get('username')).trim()
    void create.run({
      ...(email ? { email } : {}),
      ...(username ? { username } : {}),
      password: String(f.get('password')),
    })
  }
  return (
    <form className="panel stack" onSubmit={submit} aria-labelledby="create-user">
      <h2 id="create-user">New user</h2>
      <label>
        Email
        <input name="email" type="email" autoComplete="off" />
      </label>
      <label>
        Username
        <input name="username" autoComplete="off" />
      </label>
      <label>
        Initial password
        <input name="password" type="password" autoComplete="new-password" required />
      </label>
      <ErrorBox error={create.error} />
      <div className="row">
        <button type="submit" disabled={create.pending}>
          Create
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  )
}

export function Users() {
  const session = useSession()
  const [q, setQ] = useState('')
  const [status, setStatus] = useState('')
  const [offset, setOffset] = useState(0)
  const [creating, setCreating] = useState(false)
  const query = {
    limit: LIMIT,
    offset,
    ...(q ? { q } : {}),
    ...(status ? { status: status as 'ACTIVE' | 'INACTIVE' | 'SUSPENDED' } : {}),
  }
  const users = useQuery({
    queryKey: ['users', query],
    queryFn: () => tessera.GET('/api/v1/users', { params: { query } }),
  })
  const search = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const f = new FormData(e.currentTarget)
    setQ(String(f.get('q')).trim())
    setStatus(String(f.get('status')))
    setOffset(0)
  }
  return (
    <>
      <h1>Users</h1>
      <div className="toolbar">
        <form role="search" onSubmit={search} className="row">
          <label>
            Search users
            <input name="q" type="search" defaultValue={q} />
          </label>
          <label>
            Status
            <select name="status" defaultValue={status}>
              <option value="">Any</option>
              <option value="ACTIVE">Active</option>
              <option value="INACTIVE">Inactive</option>
              <option value="SUSPENDED">Suspended</option>
            </select>
          </label>
          <button type="submit">Search</button>
        </form>
        {session.can('users:create') && !creating && (
          <button type="button" onClick={() => setCreating(true)}>
            Create user
          </button>
        )}
      </div>
      {creating && <CreateUser onClose={() => setCreating(false)} />}
      <ErrorBox error={users.error} />
      {users.isPending ? (
        <Loading what="users" />
      ) : users.data && users.data.items.length === 0 ? (
        <Empty>{q || status ? 'No user matches this search.' : 'No user yet.'}</Empty>
      ) : (
        users.data && (
          <>
            <div className="scroll">
              <table>
                <caption>{users.data.total} users</caption>
                <thead>
                  <tr>
                    <th scope="col">User</th>
                    <th scope="col">Status</th>
                    <th scope="col">Roles</th>
                    <th scope="col">Last login</th>
                  </tr>
                </thead>
                <tbody>
                  {users.data.items.map((u) => (
                    <tr key={u.id}>
                      <td>
                        <Link to={`/users/${u.id}`}>{u.email ?? u.username ?? u.cpf_cnpj ?? u.id}</Link>
                      </td>
                      <td>{u.status}</td>
                      <td>{u.roles.join(', ')}</td>
                      <td>{when(u.lastLoginAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager total={users.data.total} limit={LIMIT} offset={offset} onOffset={setOffset} />
          </>
        )
      )}
    </>
  )
}
