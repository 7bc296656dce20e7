import { useState, type FormEvent } from 'react'
import { useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { useAction } from '../action'
import { navigate } from '../router'
import { ConfirmButton } from '../ui/ConfirmButton'
import { ErrorBox } from '../ui/feedback'
import { FormFooter } from '../ui/FormFooter'
import { t } from '../i18n'

type Tenant = components['schemas']['Tenant']
type Update = components['schemas']['UpdateTenantRequest']

/** The fields of PATCH /tenants/{id} that differ from the tenant as it is (the API wants at least one). */
function changed(tn: Tenant, name: string, status: string | null): Update {
  return {
    ...(name !== tn.name ? { name } : {}),
    ...((status === 'ACTIVE' || status === 'INACTIVE') && status !== tn.status ? { status } : {}),
  }
}

/** Edit a tenant's name and, where `withStatus`, its status; the code cannot change (the API refuses it). */
export function TenantEdit({ tenant, withStatus }: { tenant: Tenant; withStatus: boolean }) {
  const queries = useQueryClient()
  const [saved, setSaved] = useState('')
  const save = useAction(
    (body: Update) => tessera.PATCH('/api/v1/tenants/{id}', { params: { path: { id: tenant.id } }, body }),
    (tn) => {
      queries.setQueryData(['tenants', tn.id], tn)
      void queries.invalidateQueries({ queryKey: ['tenants'] })
      void queries.invalidateQueries({ queryKey: ['tenant'] })
      setSaved(t('tenant.saved'))
    },
  )
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setSaved('')
    const f = new FormData(e.currentTarget)
    const body = changed(tenant, String(f.get('name')).trim(), withStatus ? String(f.get('status')) : null)
    if (Object.keys(body).length === 0) setSaved(t('settings.nothing'))
    else void save.run(body)
  }
  return (
    <section aria-labelledby="tenant-edit" className="panel">
      <h2 id="tenant-edit">{t('tenant.edit')}</h2>
      {/* Why keyed by the stored values: after a save the fields show what the service kept. */}
      <form className="stack" onSubmit={submit} key={`${tenant.name}|${tenant.status}`}>
        <label>
          {t('tenants.name')}
          <input name="name" required maxLength={100} defaultValue={tenant.name} />
        </label>
        {withStatus && (
          <>
            <label>
              {t('users.status')}
              <select name="status" defaultValue={tenant.status} aria-describedby="tenant-status-help">
                <option value="ACTIVE">{t('status.ACTIVE')}</option>
                <option value="INACTIVE">{t('status.INACTIVE')}</option>
              </select>
            </label>
            <small id="tenant-status-help" className="muted">
              {t('tenant.inactiveHelp')}
            </small>
          </>
        )}
        <FormFooter submit={t('tenant.save')} error={save.error} pending={save.pending} status={saved} />
      </form>
    </section>
  )
}

/** Delete a tenant (DELETE /tenants/{id}) after a confirming click; then back to the Tenants list. */
export function TenantDelete({ tenant }: { tenant: Tenant }) {
  const queries = useQueryClient()
  const remove = useAction(
    () => tessera.DELETE('/api/v1/tenants/{id}', { params: { path: { id: tenant.id } } }),
    () => {
      queries.removeQueries({ queryKey: ['tenants', tenant.id] })
      void queries.invalidateQueries({ queryKey: ['tenants'] })
      navigate(`/tenants?deleted=${encodeURIComponent(tenant.name)}`)
    },
  )
  return (
    <section aria-labelledby="tenant-delete" className="panel stack">
      <h2 id="tenant-delete">{t('user.delete')}</h2>
      <p className="muted">{t('tenant.deleteHelp')}</p>
      <div className="row">
        <ConfirmButton
          label={t('user.deleteName', { name: tenant.name })}
          confirm={t('tenant.deleteConfirm')}
          danger
          warning={t('tenant.deleteWarning', { name: tenant.name })}
          onConfirm={() => void remove.run()}
        />
      </div>
      <ErrorBox error={remove.error} />
    </section>
  )
}
