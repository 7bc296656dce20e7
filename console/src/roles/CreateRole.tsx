import type { FormEvent } from 'react'
import { useQueryClient } from '@tanstack/react-query'
import { tessera } from '../api'
import { navigate } from '../router'
import { useAction } from '../action'
import { FormFooter } from '../ui/FormFooter'
import { PermissionChecks } from './PermissionChecks'
import { t } from '../i18n'

/** The new role's name, description, level and permissions; then its own page. */
export function CreateRole({ onClose }: { onClose: () => void }) {
  const queries = useQueryClient()
  const create = useAction(
    (body: { name: string; description?: string; level: number; permissions: string[] }) =>
      tessera.POST('/api/v1/roles', { body }),
    (role) => {
      void queries.invalidateQueries({ queryKey: ['roles'] })
      navigate(`/roles/${role.id}`)
    },
  )
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const f = new FormData(e.currentTarget)
    const description = String(f.get('description') ?? '').trim()
    void create.run({
      name: String(f.get('name')).trim(),
      ...(description ? { description } : {}),
      level: Number(f.get('level') ?? 0),
      permissions: f.getAll('permission').map(String),
    })
  }
  return (
    <form className="panel stack" onSubmit={submit} aria-labelledby="new-role">
      <h2 id="new-role">{t('role.new')}</h2>
      <label>
        {t('role.name')}
        <input name="name" required maxLength={64} />
      </label>
      <label>
        {t('role.description')}
        <input name="description" maxLength={500} />
      </label>
      <label>
        {t('roles.level')}
        <input
          name="level"
          type="number"
          min={0}
          max={1000}
          step={1}
          defaultValue={0}
          aria-describedby="level-help"
        />
      </label>
      <p id="level-help" className="muted">
        {t('role.levelHelp')}
      </p>
      <PermissionChecks />
      <FormFooter
        submit={t('users.create')}
        error={create.error}
        pending={create.pending}
        onCancel={onClose}
      />
    </form>
  )
}
