import { useState, type FormEvent } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { tessera } from '../api'
import { useSession } from '../session'
import { useAction } from '../action'
import { parseList } from '../lib/key-usage'
import { PublishableKeys } from '../publishable-keys/PublishableKeys'
import { Link, useUrlSort } from '../router'
import { ConfirmButton } from '../ui/ConfirmButton'
import { ErrorBox, Loading } from '../ui/feedback'
import { FormFooter } from '../ui/FormFooter'
import { when } from '../ui/format'
import { List, usePage } from '../ui/List'
import { ShownOnce } from '../ui/ShownOnce'
import { t } from '../i18n'

const LIMIT = 20

function CreateKey({
  onCreated,
  onClose,
}: {
  onCreated: (name: string, key: string) => void
  onClose: () => void
}) {
  const scopes = useQuery({ queryKey: ['scopes'], queryFn: () => tessera.GET('/api/v1/client-keys/scopes') })
  const create = useAction(
    (body: {
      name: string
      scopes: string[]
      ipAllowlist?: string[]
      originAllowlist?: string[]
      expiresAt?: string
    }) => tessera.POST('/api/v1/client-keys', { body }),
    (k) => onCreated(k.name, k.key),
  )
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const f = new FormData(e.currentTarget)
    const ips = parseList(String(f.get('ips') ?? ''))
    const origins = parseList(String(f.get('origins') ?? ''))
    const expires = String(f.get('expires') ?? '')
    void create.run({
      // Why the end of that day, UTC: a key that expires "on" a date works through it.
      ...(expires ? { expiresAt: `${expires}T23:59:59.000Z` } : {}),
      name: String(f.get('name')).trim(),
      scopes: f.getAll('scope').map(String),
      ...(ips.length ? { ipAllowlist: ips } : {}),
      ...(origins.length ? { originAllowlist: origins } : {}),
    })
  }
  return (
    <form className="panel stack" onSubmit={submit} aria-labelledby="new-key">
      <h2 id="new-key">{t('keys.new')}</h2>
      <label>
        {t('tenants.name')}
        <input name="name" required maxLength={100} />
      </label>
      <fieldset>
        <legend>{t('keys.scopes')}</legend>
        {scopes.isPending && <Loading what={t('keys.scopesWhat')} />}
        <ErrorBox error={scopes.error} />
        <div className="checks">
          {scopes.data?.items.map((s) => (
            <label key={s.scope} className="check">
              <input type="checkbox" name="scope" value={s.scope} /> {s.scope}
            </label>
          ))}
        </div>
      </fieldset>
      <label>
        {t('keys.addresses')}
        <input name="ips" />
      </label>
      <label>
        {t('keys.origins')}
        <input name="origins" />
      </label>
      <label>
        {t('keys.expiresOn')}
        <input
          name="expires"
          type="date"
          min={new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}
        />
      </label>
      <FormFooter
        submit={t('users.create')}
        error={create.error}
        pending={create.pending}
        onCancel={onClose}
      />
    </form>
  )
}

export function Keys() {
  const session = useSession()
  const queries = useQueryClient()
  const page = usePage(LIMIT)
  // Why sorted in the page: the API takes no sort parameter, so List orders the page it loaded.
  const sort = useUrlSort()
  const [creating, setCreating] = useState(false)
  const [shown, setShown] = useState<{ name: string; key: string } | null>(null)
  const refresh = () => void queries.invalidateQueries({ queryKey: ['keys'] })
  const keys = useQuery({
    queryKey: ['keys', page.offset],
    queryFn: () =>
      tessera.GET('/api/v1/client-keys/tenant', {
        params: { query: { limit: page.limit, offset: page.offset } },
      }),
  })
  const rotate = useAction(
    (id: string) =>
      tessera.POST('/api/v1/client-keys/{id}/rotate', {
        params: { path: { id } },
        body: { gracePeriodSeconds: 0 },
      }),
    (k) => {
      setShown({ name: k.name, key: k.key })
      refresh()
    },
  )
  const revoke = useAction(
    (id: string) => tessera.POST('/api/v1/client-keys/{id}/revoke', { params: { path: { id } } }),
    refresh,
  )
  return (
    <>
      <h1>{t('screen.keys')}</h1>
      <section aria-labelledby="client-keys">
        <h2 id="client-keys">{t('keys.clientKeys')}</h2>
        <p className="muted">{t('keys.help')}</p>
        {shown && <ShownOnce name={shown.name} value={shown.key} onDone={() => setShown(null)} />}
        {session.can('client-keys:create') && !creating && (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            {t('keys.create')}
          </button>
        )}
        {creating && (
          <CreateKey
            onClose={() => setCreating(false)}
            onCreated={(name, key) => {
              setCreating(false)
              setShown({ name, key })
              refresh()
            }}
          />
        )}
        <List
          what={t('keys.what')}
          error={keys.error ?? rotate.error ?? revoke.error}
          pending={keys.isPending}
          items={keys.data?.items}
          empty={t('keys.none')}
          page={page}
          total={keys.data?.total}
          rowKey={(k) => k.id}
          sort={sort}
          columns={[
            {
              key: 'name',
              title: t('tenants.name'),
              cell: (k) => <Link to={`/keys/${k.id}`}>{k.name}</Link>,
              sortBy: (k) => k.name,
            },
            {
              key: 'prefix',
              title: t('keys.prefix'),
              cell: (k) => `${k.prefix}…`,
              className: 'mono',
              sortBy: (k) => k.prefix,
            },
            { key: 'status', title: t('users.status'), cell: (k) => k.status, sortBy: (k) => k.status },
            {
              key: 'scopes',
              title: t('keys.scopes'),
              cell: (k) => k.scopes.join(', '),
              sortBy: (k) => k.scopes.join(', '),
            },
            {
              key: 'last-used',
              title: t('keys.lastUsed'),
              cell: (k) => when(k.lastUsedAt),
              sortBy: (k) => k.lastUsedAt,
            },
            {
              key: 'expires',
              title: t('keys.expires'),
              cell: (k) => (k.expiresAt ? when(k.expiresAt) : t('keys.never')),
              // Why a far date for none: a key that never expires sorts after every dated one.
              sortBy: (k) => k.expiresAt ?? '9999',
            },
            {
              title: t('tenants.actions'),
              className: 'row',
              cell: (k) =>
                k.status === 'ACTIVE' && (
                  <>
                    {session.can('client-keys:update') && (
                      <ConfirmButton
                        label={t('keys.rotateName', { name: k.name })}
                        confirm={t('keys.rotateNow')}
                        warning={t('keys.rotateWarning')}
                        onConfirm={() => void rotate.run(k.id)}
                      />
                    )}
                    {session.can('client-keys:revoke') && (
                      <ConfirmButton
                        label={t('keys.revokeName', { name: k.name })}
                        confirm={t('keys.revokeNow')}
                        warning={t('keys.revokeWarning')}
                        onConfirm={() => void revoke.run(k.id)}
                      />
                    )}
                  </>
                ),
            },
          ]}
        />
      </section>
      {session.can('client-keys:read') && <PublishableKeys />}
    </>
  )
}
