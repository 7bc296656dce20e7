import { useState, type FormEvent } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { permissionDiff } from '../lib/role-diff'
import { PermissionChecks } from '../roles/PermissionChecks'
import { RoleDetails } from '../roles/RoleDetails'
import { Link } from '../router'
import { useSession } from '../session'
import { useAction } from '../action'
import { ErrorBox, Loading } from '../ui/feedback'
import { FormFooter } from '../ui/FormFooter'
import { List, usePage } from '../ui/List'
import { count } from '../lib/plural'

const HOLDERS = 20

type Role = components['schemas']['Role']

/** The built-in admin role holds every permission of its tenant by definition: nothing to edit. */
const everything = (role: Role) => role.isSystem && role.name === 'admin'

/** Checkboxes of the role's permissions; saving adds and removes what changed, in two calls. */
function RolePermissions({ role }: { role: Role }) {
  const session = useSession()
  const queries = useQueryClient()
  const [saved, setSaved] = useState('')
  const save = useAction(
    async (chosen: string[]) => {
      const { add, remove } = permissionDiff(role.permissions, chosen)
      const path = { params: { path: { id: role.id } } }
      if (add.length)
        await tessera.POST('/api/v1/roles/{id}/permissions', { ...path, body: { permissions: add } })
      if (remove.length)
        await tessera.DELETE('/api/v1/roles/{id}/permissions', { ...path, body: { permissions: remove } })
      return add.length + remove.length
    },
    (changed) => {
      void queries.invalidateQueries({ queryKey: ['roles'] })
      setSaved(changed ? 'Permissions saved.' : 'Nothing to change.')
    },
  )
  if (everything(role) || !session.can('roles:update')) {
    return (
      <section aria-labelledby="role-perms" className="panel">
        <h2 id="role-perms">Permissions</h2>
        {everything(role) ? (
          <p>Every permission of the tenant, always: the built-in admin role cannot be narrowed.</p>
        ) : (
          <p>{role.permissions.length ? role.permissions.join(', ') : 'None.'}</p>
        )}
      </section>
    )
  }
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setSaved('')
    void save.run(new FormData(e.currentTarget).getAll('permission').map(String))
  }
  return (
    <form aria-labelledby="role-perms" className="panel stack" onSubmit={submit}>
      <h2 id="role-perms">Permissions</h2>
      <p className="muted">Checked: held by everyone with this role. You can give only what you hold.</p>
      <PermissionChecks held={role.permissions} legend="Permissions of this role" />
      <FormFooter submit="Save permissions" error={save.error} pending={save.pending} status={saved} />
    </form>
  )
}

/** Who holds the role: the users with it, a page at a time, each a link to their page. */
function Holders({ role }: { role: Role }) {
  const page = usePage(HOLDERS)
  const holders = useQuery({
    queryKey: ['users', 'role', role.name, page.offset],
    queryFn: () =>
      tessera.GET('/api/v1/users', {
        params: { query: { role: role.name, limit: page.limit, offset: page.offset } },
      }),
  })
  return (
    <section aria-labelledby="role-holders" className="panel">
      <h2 id="role-holders">Holders</h2>
      <List
        what="the role's holders"
        error={holders.error}
        pending={holders.isPending}
        items={holders.data?.items}
        empty="Nobody holds this role."
        page={page}
        total={holders.data?.total}
      >
        {(items) => (
          <>
            <p>{count(holders.data?.total ?? items.length, 'person holds it', 'people hold it')}.</p>
            <ul className="list">
              {items.map((u) => (
                <li key={u.id}>
                  <Link to={`/users/${u.id}`}>{u.email ?? u.username ?? u.cpf_cnpj ?? u.id}</Link>
                  {u.status !== 'ACTIVE' && <span className="muted"> ({u.status.toLowerCase()})</span>}
                </li>
              ))}
            </ul>
          </>
        )}
      </List>
    </section>
  )
}

/** One role: its facts and details, its permissions; its own URL, /roles/{id}. */
export function RolePage({ id }: { id: string }) {
  const session = useSession()
  const role = useQuery({
    queryKey: ['roles', id],
    queryFn: () => tessera.GET('/api/v1/roles/{id}', { params: { path: { id } } }),
  })
  const r = role.data
  return (
    <>
      <p>
        <Link to="/roles">← Roles</Link>
      </p>
      <h1>{r ? `Role ${r.name}` : 'Role'}</h1>
      <ErrorBox error={role.error} />
      {role.isPending && <Loading what="the role" />}
      {r && (
        <div className="grid">
          <RoleDetails role={r} />
          <RolePermissions role={r} />
          {session.can('users:read') && <Holders key={r.id} role={r} />}
        </div>
      )}
    </>
  )
}
