import { useState, type FormEvent } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { useUrlSort } from '../router'
import { useSession } from '../session'
import { useAction } from '../action'
import { ConfirmButton } from '../ui/ConfirmButton'
import { FormFooter } from '../ui/FormFooter'
import { List, usePage } from '../ui/List'
import { t } from '../i18n'

type Permission = components['schemas']['Permission']

const LIMIT = 20

/**
 * After a permission is created or deleted: the lists read again, and the caller's token refreshed, since
 * its claims say what it holds (the built-in admin role holds every permission of the tenant, new ones too)
 * and the role and grant editors offer only what it holds.
 */
function useChanged() {
  const session = useSession()
  const queries = useQueryClient()
  return async () => {
    void queries.invalidateQueries({ queryKey: ['permissions'] })
    await tessera.refresh()
    session.update()
  }
}

function CreatePermission({ onClose }: { onClose: () => void }) {
  const changed = useChanged()
  const [done, setDone] = useState('')
  const create = useAction(
    (body: { name: string; description?: string }) => tessera.POST('/api/v1/permissions', { body }),
    async (p) => {
      await changed()
      setDone(t('perm.created', { name: p.name }))
    },
  )
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const f = new FormData(e.currentTarget)
    const description = String(f.get('description') ?? '').trim()
    void create.run({ name: String(f.get('name')).trim(), ...(description ? { description } : {}) })
  }
  return (
    <form className="panel stack" onSubmit={submit} aria-labelledby="new-permission">
      <h2 id="new-permission">{t('perm.new')}</h2>
      <label>
        {t('tenants.name')}
        <input
          name="name"
          required
          maxLength={128}
          pattern="[a-z][a-z0-9\-]*:([a-z][a-z0-9\-]*|\*)"
          placeholder="invoices:read"
          aria-describedby="permission-name-help"
        />
      </label>
      <p id="permission-name-help" className="muted">
        {t('perm.nameHelp1')} <code>invoices:read</code>. {t('perm.nameHelp2')} <code>*</code>{' '}
        {t('perm.nameHelp3')}
      </p>
      <label>
        {t('role.description')}
        <input name="description" maxLength={500} />
      </label>
      <FormFooter
        submit={t('users.create')}
        error={create.error}
        pending={create.pending}
        onCancel={onClose}
        status={done}
      />
    </form>
  )
}

function Description({ permission }: { permission: Permission }) {
  const queries = useQueryClient()
  const [saved, setSaved] = useState('')
  const save = useAction(
    (description: string) =>
      tessera.PATCH('/api/v1/permissions/{id}', {
        params: { path: { id: permission.id } },
        body: { description },
      }),
    () => {
      void queries.invalidateQueries({ queryKey: ['permissions'] })
      setSaved(t('tenant.saved'))
    },
  )
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setSaved('')
    void save.run(String(new FormData(e.currentTarget).get('description') ?? '').trim())
  }
  return (
    <form className="row" onSubmit={submit} aria-label={t('provider.edit', { name: permission.name })}>
      <input
        name="description"
        aria-label={t('perm.descriptionOf', { name: permission.name })}
        defaultValue={permission.description ?? ''}
        maxLength={500}
      />
      <FormFooter
        submit={t('tenant.save')}
        error={save.error}
        pending={save.pending}
        status={saved}
        layout="inline"
      />
    </form>
  )
}

/** The tenant's own permissions (`resource:action`, beside the built-in ones): create, describe, delete. */
export function Permissions() {
  const session = useSession()
  const page = usePage(LIMIT)
  // Why sorted in the page: the API takes no sort parameter, so List orders the page it loaded.
  const sort = useUrlSort()
  const [creating, setCreating] = useState(false)
  const changed = useChanged()
  const list = useQuery({
    queryKey: ['permissions', 'custom', page.offset],
    queryFn: () =>
      tessera.GET('/api/v1/permissions/custom', {
        params: { query: { limit: page.limit, offset: page.offset } },
      }),
  })
  const remove = useAction(
    (p: Permission) => tessera.DELETE('/api/v1/permissions/{id}', { params: { path: { id: p.id } } }),
    () => void changed(),
  )
  return (
    <>
      <h1>{t('screen.permissions')}</h1>
      <p className="muted">
        {t('perm.help1')} <code>invoices:read</code>
        {t('perm.help2')}
      </p>
      {session.can('permissions:create') && !creating && (
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          {t('perm.create')}
        </button>
      )}
      {creating && <CreatePermission onClose={() => setCreating(false)} />}
      <List
        what={t('perm.what')}
        error={list.error ?? remove.error}
        pending={list.isPending}
        items={list.data?.items}
        empty={t('perm.none')}
        page={page}
        total={list.data?.total}
        caption={(total) => t('perm.count', { count: total })}
        rowKey={(p) => p.id}
        sort={sort}
        columns={[
          {
            key: 'permission',
            title: t('perm.permission'),
            cell: (p) => <code>{p.name}</code>,
            sortBy: (p) => p.name,
          },
          {
            key: 'description',
            title: t('role.description'),
            cell: (p) =>
              session.can('permissions:update') ? <Description permission={p} /> : (p.description ?? '—'),
            sortBy: (p) => p.description,
          },
          {
            title: t('tenants.actions'),
            cell: (p) =>
              session.can('permissions:delete') ? (
                <ConfirmButton
                  label={t('user.deleteName', { name: p.name })}
                  confirm={t('perm.deleteIt')}
                  warning={t('perm.deleteWarning')}
                  onConfirm={() => void remove.run(p)}
                />
              ) : null,
          },
        ]}
      />
    </>
  )
}
