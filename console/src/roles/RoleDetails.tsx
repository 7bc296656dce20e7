import { useState, type FormEvent } from 'react'
import { useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { navigate } from '../router'
import { useSession } from '../session'
import { useAction } from '../action'
import { ConfirmButton } from '../ui/ConfirmButton'
import { ErrorBox } from '../ui/feedback'
import { FormFooter } from '../ui/FormFooter'
import { when } from '../ui/format'
import { t } from '../i18n'

type Role = components['schemas']['Role']

/**
 * A role's facts; its name, description and level edited with `roles:update`, and deletion with
 * `roles:delete`. Built-in roles can be neither renamed nor deleted, so they show no control here.
 */
export function RoleDetails({ role }: { role: Role }) {
  const session = useSession()
  const queries = useQueryClient()
  const [saved, setSaved] = useState('')
  const save = useAction(
    (body: { name?: string; description?: string | null; level?: number }) =>
      tessera.PATCH('/api/v1/roles/{id}', { params: { path: { id: role.id } }, body }),
    (updated) => {
      queries.setQueryData(['roles', role.id], updated)
      void queries.invalidateQueries({ queryKey: ['roles'] })
      setSaved(t('role.saved'))
    },
  )
  const remove = useAction(
    () => tessera.DELETE('/api/v1/roles/{id}', { params: { path: { id: role.id } } }),
    () => {
      // Why remove, not invalidate: a stale list would show the deleted role until its refetch answered.
      queries.removeQueries({ queryKey: ['roles'] })
      navigate('/roles')
    },
  )
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setSaved('')
    const f = new FormData(e.currentTarget)
    const name = String(f.get('name') ?? '').trim()
    const description = String(f.get('description') ?? '').trim() || null
    const level = Number(f.get('level'))
    // Why only what changed: a rename of nothing would still be checked (and audited) as one.
    const body = {
      ...(name !== role.name ? { name } : {}),
      ...(description !== role.description ? { description } : {}),
      ...(level !== role.level ? { level } : {}),
    }
    if (Object.keys(body).length === 0) setSaved(t('role.nothing'))
    else void save.run(body)
  }
  const editable = !role.isSystem && session.can('roles:update')
  return (
    <section aria-labelledby="role-details" className="panel stack">
      <h2 id="role-details">{t('user.details')}</h2>
      <dl className="facts">
        <dt>{t('roles.level')}</dt>
        <dd>{role.level}</dd>
        <dt>{t('role.description')}</dt>
        <dd>{role.description ?? '—'}</dd>
        <dt>{t('idp.kind')}</dt>
        <dd>{role.isSystem ? t('role.builtIn') : t('role.custom')}</dd>
        <dt>{t('tenant.updated')}</dt>
        <dd>{when(role.updatedAt)}</dd>
      </dl>
      {editable && (
        <form onSubmit={submit} className="stack">
          <label>
            {t('role.name')}
            <input name="name" required maxLength={64} defaultValue={role.name} />
          </label>
          <label>
            {t('role.description')}
            <input name="description" maxLength={500} defaultValue={role.description ?? ''} />
          </label>
          <label>
            {t('roles.level')}
            <input name="level" type="number" min={0} max={1000} step={1} defaultValue={role.level} />
          </label>
          <FormFooter submit={t('role.save')} error={save.error} pending={save.pending} status={saved} />
        </form>
      )}
      {!role.isSystem && session.can('roles:delete') && (
        <div className="row">
          <ConfirmButton
            label={t('role.deleteName', { name: role.name })}
            confirm={t('app.deleteNow')}
            warning={t('role.deleteWarning')}
            onConfirm={() => void remove.run()}
          />
        </div>
      )}
      <ErrorBox error={remove.error} />
    </section>
  )
}
