import { useState, type FormEvent } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { tessera } from '../api'
import { Link, useLocation, useSearchParam, useUrlSort } from '../router'
import { useSession } from '../session'
import { useAction } from '../action'
import { ConfirmButton } from '../ui/ConfirmButton'
import { FormFooter } from '../ui/FormFooter'
import { when } from '../ui/format'
import { List, usePage } from '../ui/List'
import { t } from '../i18n'

const LIMIT = 20

function CreateTenant({ onClose }: { onClose: () => void }) {
  const queries = useQueryClient()
  const [created, setCreated] = useState('')
  const create = useAction(
    (body: { code: string; name: string; admin: { email: string; password: string } }) =>
      tessera.POST('/api/v1/tenants', { body }),
    (tn) => {
      setCreated(t('tenants.created', { name: tn.name, code: tn.code }))
      void queries.invalidateQueries({ queryKey: ['tenants'] })
    },
  )
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const f = new FormData(e.currentTarget)
    void create.run({
      code: String(f.get('code')).trim(),
      name: String(f.get('name')).trim(),
      admin: { email: String(f.get('email')).trim(), password: String(f.get('password')) },
    })
  }
  if (created) {
    return (
      <div className="callout">
        <p role="status">{created}</p>
        <button type="button" onClick={onClose}>
          {t('tenants.done')}
        </button>
      </div>
    )
  }
  return (
    <form className="panel stack" onSubmit={submit} aria-labelledby="new-tenant">
      <h2 id="new-tenant">{t('tenants.new')}</h2>
      <label>
        {t('tenants.codeLabel')}
        <input name="code" required pattern="[a-z0-9][a-z0-9\-]*" aria-describedby="code-hint" autoFocus />
      </label>
      <small id="code-hint" className="muted">
        {t('tenants.codeHint')}
      </small>
      <label>
        {t('tenants.name')}
        <input name="name" required />
      </label>
      <fieldset>
        <legend>{t('tenants.firstAdmin')}</legend>
        <label>
          {t('tenants.adminEmail')}
          <input name="email" type="email" required autoComplete="off" />
        </label>
        <label>
          {t('tenants.adminPassword')}
          <input name="password" type="password" required autoComplete="new-password" />
        </label>
      </fieldset>
      <FormFooter
        submit={t('users.create')}
        error={create.error}
        pending={create.pending}
        onCancel={onClose}
      />
    </form>
  )
}

export function Tenants() {
  const { query } = useLocation()
  const session = useSession()
  const queries = useQueryClient()
  const page = usePage(LIMIT)
  // Why sorted in the page: the API takes no sort parameter, so List orders the page it loaded.
  const sort = useUrlSort()
  // Why in the URL: a filtered list is a link to share, and reload and Back keep it (as the Users search).
  const [status, setStatusFilter] = useSearchParam('status')
  const only = status === 'ACTIVE' || status === 'INACTIVE' ? status : undefined
  const deleted = query.get('deleted')
  const [creating, setCreating] = useState(query.get('create') === '1')
  const tenants = useQuery({
    queryKey: ['tenants', page.offset, only],
    queryFn: () =>
      tessera.GET('/api/v1/tenants', {
        params: { query: { limit: page.limit, offset: page.offset, ...(only ? { status: only } : {}) } },
      }),
  })
  const filter = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    page.onOffset(0)
    setStatusFilter(String(new FormData(e.currentTarget).get('status') ?? ''))
  }
  const setStatus = useAction(
    (id: string, status: 'ACTIVE' | 'INACTIVE') =>
      tessera.PATCH('/api/v1/tenants/{id}', { params: { path: { id } }, body: { status } }),
    () => void queries.invalidateQueries({ queryKey: ['tenants'] }),
  )
  return (
    <>
      <h1>{t('screen.tenants')}</h1>
      {deleted && <p role="status">{t('tenants.deleted', { name: deleted })}</p>}
      <div className="toolbar">
        <form
          role="search"
          aria-label={t('tenants.filter')}
          onSubmit={filter}
          className="row"
          key={only ?? ''}
        >
          <label>
            {t('users.status')}
            <select name="status" defaultValue={only ?? ''}>
              <option value="">{t('users.any')}</option>
              <option value="ACTIVE">{t('status.ACTIVE')}</option>
              <option value="INACTIVE">{t('status.INACTIVE')}</option>
            </select>
          </label>
          <button type="submit">{t('tenants.filterButton')}</button>
        </form>
        {!creating && (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            {t('tenants.create')}
          </button>
        )}
      </div>
      {creating && <CreateTenant onClose={() => setCreating(false)} />}
      <List
        what={t('tenants.what')}
        error={tenants.error ?? setStatus.error}
        pending={tenants.isPending}
        items={tenants.data?.items}
        empty={only ? t('tenants.noneWithStatus') : t('tenants.none')}
        page={page}
        total={tenants.data?.total}
        caption={(total) => t('tenants.count', { count: total })}
        rowKey={(tn) => tn.id}
        sort={sort}
        columns={[
          {
            key: 'tenant',
            title: t('screen.tenant'),
            cell: (tn) => <Link to={`/tenants/${tn.id}`}>{tn.name}</Link>,
            sortBy: (tn) => tn.name,
          },
          {
            key: 'code',
            title: t('tenants.code'),
            cell: (tn) => <code>{tn.code}</code>,
            sortBy: (tn) => tn.code,
          },
          { key: 'status', title: t('users.status'), cell: (tn) => tn.status, sortBy: (tn) => tn.status },
          {
            title: t('tenants.database'),
            cell: (tn) =>
              tn.database.dedicated
                ? t('tenants.own', { where: `${tn.database.host ?? ''}/${tn.database.database ?? ''}` })
                : t('tenants.shared'),
          },
          {
            key: 'created',
            title: t('user.created'),
            cell: (tn) => when(tn.createdAt),
            sortBy: (tn) => tn.createdAt,
          },
          {
            title: t('tenants.actions'),
            cell: (tn) =>
              tn.code === session.tenantCode ? (
                <span className="muted">{t('tenants.yours')}</span>
              ) : tn.status === 'ACTIVE' ? (
                <ConfirmButton
                  label={t('tenants.deactivate', { name: tn.name })}
                  confirm={t('tenants.deactivateNow')}
                  warning={t('tenants.deactivateWarning')}
                  onConfirm={() => void setStatus.run(tn.id, 'INACTIVE')}
                />
              ) : (
                <button type="button" onClick={() => void setStatus.run(tn.id, 'ACTIVE')}>
                  {t('tenants.reactivate', { name: tn.name })}
                </button>
              ),
          },
        ]}
      />
    </>
  )
}
