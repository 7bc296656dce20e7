import { useState, type FormEvent } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { tessera } from '../api'
import { Link, navigate, useLocation, useUrlSort } from '../router'
import { useSession } from '../session'
import { useAction } from '../action'
import { FormFooter } from '../ui/FormFooter'
import { when } from '../ui/format'
import { List, usePage } from '../ui/List'
import { t } from '../i18n'
import { PasswordRule, fitting } from '../users/PasswordRule'

const LIMIT = 20

/** How a user is named in the list: the first identifier it has. */
const nameOf = (u: {
  id: string
  email?: string | null
  username?: string | null
  cpf_cnpj?: string | null
}) => u.email ?? u.username ?? u.cpf_cnpj ?? u.id

function CreateUser({ onClose }: { onClose: () => void }) {
  const queries = useQueryClient()
  const create = useAction(
    async (body: { email?: string; username?: string; password: string }) =>
      tessera.POST('/api/v1/register', { body: { ...body, password: fitting(body.password) } }),
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
      <h2 id="create-user">{t('users.new')}</h2>
      <label>
        {t('users.email')}
        <input name="email" type="email" autoComplete="off" />
      </label>
      <label>
        {t('users.username')}
        <input name="username" autoComplete="off" />
      </label>
      <label>
        {t('users.initialPassword')}
        <input
          name="password"
          type="password"
          autoComplete="new-password"
          required
          aria-describedby="new-user-password-rule"
        />
      </label>
      <PasswordRule id="new-user-password-rule" />
      <FormFooter
        submit={t('users.create')}
        error={create.error}
        pending={create.pending}
        onCancel={onClose}
      />
    </form>
  )
}

export function Users() {
  const session = useSession()
  // Why in the URL: a search is a link to share, and Back returns to it.
  const { query: url } = useLocation()
  const q = url.get('q') ?? ''
  const status = url.get('status') ?? ''
  const deleted = url.get('deleted')
  const page = usePage(LIMIT)
  // Why sorted in the page: the API takes no sort parameter, so List orders the page it loaded.
  const sort = useUrlSort()
  const [creating, setCreating] = useState(false)
  const query = {
    limit: page.limit,
    offset: page.offset,
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
    const next = new URLSearchParams()
    // Why keep the sort: a new search is read in the order the reader chose.
    if (sort.value) next.set('sort', sort.value)
    const words = String(f.get('q')).trim()
    if (words) next.set('q', words)
    if (f.get('status')) next.set('status', String(f.get('status')))
    page.onOffset(0)
    navigate(next.size ? `/users?${next}` : '/users')
  }
  return (
    <>
      <h1>{t('screen.users')}</h1>
      {deleted && <p role="status">{t('users.deleted', { name: deleted })}</p>}
      <div className="toolbar">
        <form role="search" onSubmit={search} className="row" key={`${q}|${status}`}>
          <label>
            {t('users.search')}
            <input name="q" type="search" defaultValue={q} />
          </label>
          <label>
            {t('users.status')}
            <select name="status" defaultValue={status}>
              <option value="">{t('users.any')}</option>
              <option value="ACTIVE">{t('status.ACTIVE')}</option>
              <option value="INACTIVE">{t('status.INACTIVE')}</option>
              <option value="SUSPENDED">{t('status.SUSPENDED')}</option>
            </select>
          </label>
          <button type="submit">{t('users.searchButton')}</button>
        </form>
        {session.can('users:create') && !creating && (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            {t('users.createUser')}
          </button>
        )}
      </div>
      {creating && <CreateUser onClose={() => setCreating(false)} />}
      <List
        what={t('users.what')}
        error={users.error}
        pending={users.isPending}
        items={users.data?.items}
        empty={q || status ? t('users.noMatch') : t('users.none')}
        page={page}
        total={users.data?.total}
        caption={(total) => t('users.count', { count: total })}
        rowKey={(u) => u.id}
        sort={sort}
        columns={[
          {
            key: 'user',
            title: t('screen.user'),
            cell: (u) => <Link to={`/users/${u.id}`}>{nameOf(u)}</Link>,
            sortBy: nameOf,
          },
          { key: 'status', title: t('users.status'), cell: (u) => u.status, sortBy: (u) => u.status },
          {
            key: 'roles',
            title: t('screen.roles'),
            cell: (u) => u.roles.join(', '),
            sortBy: (u) => u.roles.join(', '),
          },
          {
            key: 'last-login',
            title: t('users.lastLogin'),
            cell: (u) => when(u.lastLoginAt),
            sortBy: (u) => u.lastLoginAt,
          },
        ]}
      />
    </>
  )
}
