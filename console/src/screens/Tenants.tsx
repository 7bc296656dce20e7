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
import { count } from '../lib/plural'

const LIMIT = 20

function CreateTenant({ onClose }: { onClose: () => void }) {
  const queries = useQueryClient()
  const [created, setCreated] = useState('')
  const create = useAction(
    (body: { code: string; name: string; admin: { email: string; password: string } }) =>
      tessera.POST('/api/v1/tenants', { body }),
    (t) => {
      setCreated(`Tenant ${t.name} created. Its administrator can sign in with the tenant code “${t.code}”.`)
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
          Done
        </button>
      </div>
    )
  }
  return (
    <form className="panel stack" onSubmit={submit} aria-labelledby="new-tenant">
      <h2 id="new-tenant">New tenant</h2>
      <label>
        Tenant code
        <input name="code" required pattern="[a-z0-9][a-z0-9\-]*" aria-describedby="code-hint" autoFocus />
      </label>
      <small id="code-hint" className="muted">
        Lowercase letters, digits and hyphens; people type it to sign in. It cannot change later.
      </small>
      <label>
        Name
        <input name="name" required />
      </label>
      <fieldset>
        <legend>First administrator</legend>
        <label>
          Admin email
          <input name="email" type="email" required autoComplete="off" />
        </label>
        <label>
          Admin password
          <input name="password" type="password" required autoComplete="new-password" />
        </label>
      </fieldset>
      <FormFooter submit="Create" error={create.error} pending={create.pending} onCancel={onClose} />
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
      <h1>Tenants</h1>
      {deleted && <p role="status">Tenant {deleted} deleted.</p>}
      <div className="toolbar">
        <form role="search" aria-label="Filter tenants" onSubmit={filter} className="row" key={only ?? ''}>
          <label>
            Status
            <select name="status" defaultValue={only ?? ''}>
              <option value="">Any</option>
              <option value="ACTIVE">Active</option>
              <option value="INACTIVE">Inactive</option>
            </select>
          </label>
          <button type="submit">Filter</button>
        </form>
        {!creating && (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            Create tenant
          </button>
        )}
      </div>
      {creating && <CreateTenant onClose={() => setCreating(false)} />}
      <List
        what="tenants"
        error={tenants.error ?? setStatus.error}
        pending={tenants.isPending}
        items={tenants.data?.items}
        empty={only ? 'No tenant has this status.' : 'No tenant yet.'}
        page={page}
        total={tenants.data?.total}
        caption={(total) => count(total, 'tenant', 'tenants')}
        rowKey={(t) => t.id}
        sort={sort}
        columns={[
          {
            title: 'Tenant',
            cell: (t) => <Link to={`/tenants/${t.id}`}>{t.name}</Link>,
            sortBy: (t) => t.name,
          },
          { title: 'Code', cell: (t) => <code>{t.code}</code>, sortBy: (t) => t.code },
          { title: 'Status', cell: (t) => t.status, sortBy: (t) => t.status },
          {
            title: 'Database',
            cell: (t) =>
              t.database.dedicated ? `Own: ${t.database.host ?? ''}/${t.database.database ?? ''}` : 'Shared',
          },
          { title: 'Created', cell: (t) => when(t.createdAt), sortBy: (t) => t.createdAt },
          {
            title: 'Actions',
            cell: (t) =>
              t.code === session.tenantCode ? (
                <span className="muted">Your tenant</span>
              ) : t.status === 'ACTIVE' ? (
                <ConfirmButton
                  label={`Deactivate ${t.name}`}
                  confirm="Deactivate now"
                  warning="Its users can no longer sign in."
                  onConfirm={() => void setStatus.run(t.id, 'INACTIVE')}
                />
              ) : (
                <button type="button" onClick={() => void setStatus.run(t.id, 'ACTIVE')}>
                  Reactivate {t.name}
                </button>
              ),
          },
        ]}
      />
    </>
  )
}
