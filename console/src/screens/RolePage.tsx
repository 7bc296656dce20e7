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
import { t } from '../i18n'

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
      setSaved(changed ? t('role.permsSaved') : t('role.nothing'))
    },
  )
  if (everything(role) || !session.can('roles:update')) {
    return (
      <section aria-labelledby="role-perms" className="panel">
        <h2 id="role-perms">{t('screen.permissions')}</h2>
        {everything(role) ? (
          <p>{t('role.all')}</p>
        ) : (
          <p>{role.permissions.length ? role.permissions.join(', ') : t('role.none')}</p>
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
      <h2 id="role-perms">{t('screen.permissions')}</h2>
      <p className="muted">{t('role.checked')}</p>
      <PermissionChecks held={role.permissions} legend={t('role.legend')} />
      <FormFooter submit={t('role.savePerms')} error={save.error} pending={save.pending} status={saved} />
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
      <h2 id="role-holders">{t('role.holders')}</h2>
      <List
        what={t('role.holdersWhat')}
        error={holders.error}
        pending={holders.isPending}
        items={holders.data?.items}
        empty={t('role.nobody')}
        page={page}
        total={holders.data?.total}
      >
        {(items) => (
          <>
            <p>{t('role.holdersCount', { count: holders.data?.total ?? items.length })}</p>
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
        <Link to="/roles">← {t('screen.roles')}</Link>
      </p>
      <h1>{r ? t('role.title', { name: r.name }) : t('screen.role')}</h1>
      <ErrorBox error={role.error} />
      {role.isPending && <Loading what={t('role.what')} />}
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
