import { useState } from 'react'
import { useQuery } from '@tanstack/react-query'
import { tessera } from '../api'
import { CreateRole } from '../roles/CreateRole'
import { Link, useUrlSort } from '../router'
import { useSession } from '../session'
import { List, usePage } from '../ui/List'
import { t } from '../i18n'

const LIMIT = 50

export function Roles() {
  const session = useSession()
  const page = usePage(LIMIT)
  // Why sorted in the page: the API takes no sort parameter, so List orders the page it loaded.
  const sort = useUrlSort()
  const [creating, setCreating] = useState(false)
  const roles = useQuery({
    queryKey: ['roles', page.offset],
    queryFn: () =>
      tessera.GET('/api/v1/roles', { params: { query: { limit: page.limit, offset: page.offset } } }),
  })
  return (
    <>
      <h1>{t('screen.roles')}</h1>
      <p className="muted">{t('roles.help')}</p>
      {session.can('roles:create') && !creating && (
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          {t('roles.create')}
        </button>
      )}
      {creating && <CreateRole onClose={() => setCreating(false)} />}
      <List
        what={t('roles.what')}
        error={roles.error}
        pending={roles.isPending}
        items={roles.data?.items}
        empty={t('roles.none')}
        page={page}
        total={roles.data?.total}
        rowKey={(r) => r.id}
        sort={sort}
        columns={[
          {
            key: 'role',
            title: t('screen.role'),
            cell: (r) => (
              <>
                <Link to={`/roles/${r.id}`}>{r.name}</Link>
                {r.isSystem && <span className="muted"> ({t('roles.builtIn')})</span>}
                {r.description && <div className="muted">{r.description}</div>}
              </>
            ),
            sortBy: (r) => r.name,
          },
          { key: 'level', title: t('roles.level'), cell: (r) => r.level, sortBy: (r) => r.level },
          {
            key: 'permissions',
            title: t('screen.permissions'),
            cell: (r) => (r.permissions.length ? r.permissions.join(', ') : '—'),
            sortBy: (r) => r.permissions.length,
          },
        ]}
      />
    </>
  )
}
