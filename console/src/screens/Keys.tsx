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
      <h2 id="new-key">New Client Key</h2>
      <label>
        Name
        <input name="name" required maxLength={100} />
      </label>
      <fieldset>
        <legend>Scopes</legend>
        {scopes.isPending && <Loading what="scopes" />}
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
        Allowed addresses (CIDR, comma separated; empty for any)
        <input name="ips" />
      </label>
      <label>
        Allowed origins (comma separated; empty for any)
        <input name="origins" />
      </label>
      <label>
        Expires on (empty: never)
        <input
          name="expires"
          type="date"
          min={new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}
        />
      </label>
      <FormFooter submit="Create" error={create.error} pending={create.pending} onCancel={onClose} />
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
      <h1>Keys</h1>
      <section aria-labelledby="client-keys">
        <h2 id="client-keys">Client Keys</h2>
        <p className="muted">
          Client Keys let your back ends call the API. Never put one in a browser or an app.
        </p>
        {shown && <ShownOnce name={shown.name} value={shown.key} onDone={() => setShown(null)} />}
        {session.can('client-keys:create') && !creating && (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            Create key
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
          what="keys"
          error={keys.error ?? rotate.error ?? revoke.error}
          pending={keys.isPending}
          items={keys.data?.items}
          empty="No Client Key yet."
          page={page}
          total={keys.data?.total}
          rowKey={(k) => k.id}
          sort={sort}
          columns={[
            { title: 'Name', cell: (k) => <Link to={`/keys/${k.id}`}>{k.name}</Link>, sortBy: (k) => k.name },
            { title: 'Prefix', cell: (k) => `${k.prefix}…`, className: 'mono', sortBy: (k) => k.prefix },
            { title: 'Status', cell: (k) => k.status, sortBy: (k) => k.status },
            { title: 'Scopes', cell: (k) => k.scopes.join(', '), sortBy: (k) => k.scopes.join(', ') },
            { title: 'Last used', cell: (k) => when(k.lastUsedAt), sortBy: (k) => k.lastUsedAt },
            {
              title: 'Expires',
              cell: (k) => (k.expiresAt ? when(k.expiresAt) : 'Never'),
              // Why a far date for none: a key that never expires sorts after every dated one.
              sortBy: (k) => k.expiresAt ?? '9999',
            },
            {
              title: 'Actions',
              className: 'row',
              cell: (k) =>
                k.status === 'ACTIVE' && (
                  <>
                    {session.can('client-keys:update') && (
                      <ConfirmButton
                        label={`Rotate ${k.name}`}
                        confirm="Rotate now"
                        warning="A new value is made; the old one stops at once."
                        onConfirm={() => void rotate.run(k.id)}
                      />
                    )}
                    {session.can('client-keys:revoke') && (
                      <ConfirmButton
                        label={`Revoke ${k.name}`}
                        confirm="Revoke now"
                        warning="Calls with this key stop at once."
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
