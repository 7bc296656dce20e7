import { useId, useState, type FormEvent } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { parseList } from '../lib/key-usage'
import { keyChanges, type KeyFields } from '../lib/publishable-keys'
import { choices } from '../lib/role-diff'
import { givableRoles } from '../lib/publishable-keys'
import { useSession } from '../session'
import { useAction } from '../action'
import { ErrorBox, Loading } from '../ui/feedback'
import { FormFooter } from '../ui/FormFooter'
import { t } from '../i18n'

type PublishableKey = components['schemas']['PublishableKey']
type CreatePublishableKeyRequest = components['schemas']['CreatePublishableKeyRequest']
type UpdatePublishableKeyRequest = components['schemas']['UpdatePublishableKeyRequest']

/** The API's bounds (contract section 20). */
const MAX_ORIGINS = 20
const DEFAULT_PER_HOUR = 100

function fieldsOf(form: HTMLFormElement): KeyFields {
  const f = new FormData(form)
  return {
    name: String(f.get('name') ?? '').trim(),
    allowedOrigins: parseList(String(f.get('origins') ?? '')),
    defaultRoles: f.getAll('role').map(String),
    signupsPerHour: Number(f.get('perHour') ?? DEFAULT_PER_HOUR),
  }
}

/** The tenant's roles offered as default roles (and the key's own, even when the caller cannot list them). */
function RoleChecks({ held }: { held: readonly string[] }) {
  const session = useSession()
  const canList = session.can('roles:read')
  const roles = useQuery({
    queryKey: ['roles', 'all'],
    queryFn: () => tessera.GET('/api/v1/roles', { params: { query: { limit: 100 } } }),
    enabled: canList,
  })
  // Why filtered: the service refuses a role with a management permission, one with a permission the caller
  // lacks, and one above the caller's rank (contract sections 20 and 26); the form offers none of them.
  const names = choices(
    givableRoles(roles.data?.items ?? [], tessera.claims()?.roles ?? [], session.can),
    held,
  )
  return (
    <fieldset>
      <legend>{t('provider.defaultRoles')}</legend>
      <p className="muted">{t('pk.rolesHelp')}</p>
      {canList && roles.isPending && <Loading what={t('provider.rolesWhat')} />}
      <ErrorBox error={roles.error} />
      {!canList && <p className="muted">{t('pk.rolesNeedRead')}</p>}
      <div className="checks">
        {names.map((name) => (
          <label key={name} className="check">
            <input type="checkbox" name="role" value={name} defaultChecked={held.includes(name)} /> {name}
          </label>
        ))}
      </div>
    </fieldset>
  )
}

/**
 * A publishable key's name, allowed origins, default roles and sign-ups per hour: a new key (`k` absent,
 * POST) or the edit of one (PATCH with only what changed). `onSaved` gets the key as the service answers it.
 */
export function PublishableKeyForm({
  k,
  onSaved,
  onClose,
}: {
  k?: PublishableKey
  onSaved: (k: PublishableKey) => void
  onClose?: () => void
}) {
  const queries = useQueryClient()
  const id = useId()
  const [problem, setProblem] = useState('')
  const [status, setStatus] = useState('')
  const saved = (key: PublishableKey) => {
    queries.setQueryData(['publishable-keys', key.id], key)
    void queries.invalidateQueries({ queryKey: ['publishable-keys', 'list'] })
    onSaved(key)
  }
  const create = useAction(
    (body: CreatePublishableKeyRequest) => tessera.POST('/api/v1/publishable-keys', { body }),
    saved,
  )
  const update = useAction(
    (keyId: string, body: UpdatePublishableKeyRequest) =>
      tessera.PATCH('/api/v1/publishable-keys/{id}', { params: { path: { id: keyId } }, body }),
    (key) => {
      saved(key)
      setStatus(t('tenant.saved'))
    },
  )
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setProblem('')
    setStatus('')
    const fields = fieldsOf(e.currentTarget)
    const count = fields.allowedOrigins.length
    if (count < 1 || count > MAX_ORIGINS) {
      setProblem(t('pk.originCount', { max: MAX_ORIGINS, count }))
      return
    }
    if (!k) {
      void create.run(fields)
      return
    }
    const changes = keyChanges(k, fields)
    if (Object.keys(changes).length === 0) setStatus(t('settings.nothing'))
    else void update.run(k.id, changes)
  }
  return (
    <form className="panel stack" onSubmit={submit} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{k ? t('pk.edit') : t('pk.new')}</h2>
      <label>
        {t('tenants.name')}
        <input name="name" required maxLength={100} defaultValue={k?.name} />
      </label>
      <label>
        {t('pk.origins')}
        <textarea
          name="origins"
          rows={3}
          required
          defaultValue={k?.allowedOrigins.join('\n')}
          aria-describedby={`${id}-origins`}
        />
      </label>
      <p id={`${id}-origins`} className="muted">
        {t('pk.originsHelp', { max: MAX_ORIGINS })}
      </p>
      <RoleChecks held={k?.defaultRoles ?? []} />
      <label>
        {t('pk.perHour')}
        <input
          name="perHour"
          type="number"
          required
          min={1}
          max={10_000}
          step={1}
          defaultValue={k?.signupsPerHour ?? DEFAULT_PER_HOUR}
          aria-describedby={`${id}-per-hour`}
        />
      </label>
      <p id={`${id}-per-hour`} className="muted">
        {t('pk.perHourHelp', { max: 10_000, perAddress: 10 })}
      </p>
      {problem && (
        <p role="alert" className="error">
          {problem}
        </p>
      )}
      <FormFooter
        submit={k ? t('user.save') : t('users.create')}
        error={create.error ?? update.error}
        pending={create.pending || update.pending}
        onCancel={onClose}
        status={status}
      />
    </form>
  )
}
