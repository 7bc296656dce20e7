import { useState } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { useAction } from '../action'
import { Link } from '../router'
import { useSession } from '../session'
import { ConfirmButton } from '../ui/ConfirmButton'
import { CopyButton } from '../ui/CopyButton'
import { List, usePage } from '../ui/List'
import { ProviderForm } from './ProviderForm'

type Provider = components['schemas']['IdentityProvider']

const LIMIT = 20

function kindOf(p: Provider): string {
  const kind = p.kind === 'oidc' ? 'OpenID Connect' : 'OAuth 2.0'
  const preset = { google: 'Google', microsoft: 'Microsoft', github: 'GitHub' }
  return p.preset ? `${preset[p.preset]} (${kind})` : kind
}

/**
 * Settings → Identity providers (contract section 24, "Console"): the other providers the tenant's people sign
 * in with, a new one from a preset, the edit and the deletion of one, and the callback URL to register at them.
 */
export function IdentityProviders() {
  const session = useSession()
  const queries = useQueryClient()
  const page = usePage(LIMIT)
  // null: no form open; 'new': the creation; a provider: its edit.
  const [editing, setEditing] = useState<Provider | 'new' | null>(null)
  const [status, setStatus] = useState('')
  const providers = useQuery({
    queryKey: ['identity-providers', 'list', page.offset],
    queryFn: () =>
      tessera.GET('/api/v1/identity-providers', {
        params: { query: { limit: page.limit, offset: page.offset } },
      }),
  })
  const remove = useAction(
    (p: Provider) =>
      tessera.DELETE('/api/v1/identity-providers/{id}', { params: { path: { id: p.id } } }).then(() => p),
    (p) => {
      setStatus(`${p.name} was deleted.`)
      void queries.invalidateQueries({ queryKey: ['identity-providers'] })
      void queries.invalidateQueries({ queryKey: ['login-providers'] })
    },
  )
  // Why the answer's field first: it is the service's PUBLIC_URL; the page's own origin is the same otherwise.
  const callbackUrl =
    providers.data?.items[0]?.callbackUrl ??
    `${window.location.origin}/t/${session.tenantCode}/federation/callback`
  return (
    <>
      <p>
        <Link to="/settings">← Settings</Link>
      </p>
      <h1>Identity providers</h1>
      <p className="muted">
        People of the tenant can sign in with an account they already have elsewhere: Google, Microsoft,
        GitHub or their company’s provider. Each one shows as “Continue with …” on the sign-in page.
      </p>
      <section aria-labelledby="callback" className="panel">
        <h2 id="callback">Callback URL</h2>
        <p>Register this address at each provider, as where it sends people back after they sign in:</p>
        <p>
          <code>{callbackUrl}</code> <CopyButton text={callbackUrl} name="Copy the callback URL" />
        </p>
      </section>
      {session.can('identity-providers:create') && editing === null && (
        <button type="button" className="primary" onClick={() => setEditing('new')}>
          Add an identity provider
        </button>
      )}
      {editing !== null && (
        <ProviderForm
          key={editing === 'new' ? 'new' : editing.id}
          p={editing === 'new' ? undefined : editing}
          callbackUrl={callbackUrl}
          onClose={() => setEditing(null)}
          onSaved={(p) => {
            setEditing(null)
            setStatus(editing === 'new' ? `${p.name} was added.` : `${p.name} was saved.`)
          }}
        />
      )}
      <p role="status">{status}</p>
      <List
        what="identity providers"
        error={providers.error ?? remove.error}
        pending={providers.isPending}
        items={providers.data?.items}
        empty="No identity provider yet: people sign in with their password or a passkey."
        page={page}
        total={providers.data?.total}
        rowKey={(p) => p.id}
        columns={[
          { title: 'Name', cell: (p) => p.name },
          { title: 'Kind', cell: kindOf },
          { title: 'Client ID', cell: (p) => p.clientId, className: 'mono' },
          { title: 'On the sign-in page', cell: (p) => (p.showOnLogin ? 'Yes' : 'No') },
          { title: 'New accounts', cell: (p) => (p.allowSignup ? 'Created at a first sign-in' : 'No') },
          {
            title: 'Actions',
            cell: (p) => (
              <span className="row">
                {session.can('identity-providers:update') && (
                  <button type="button" aria-label={`Edit ${p.name}`} onClick={() => setEditing(p)}>
                    Edit
                  </button>
                )}
                {session.can('identity-providers:delete') && (
                  <ConfirmButton
                    label={`Delete ${p.name}`}
                    confirm="Delete it"
                    warning="Its linked identities stop signing anyone in."
                    onConfirm={() => void remove.run(p)}
                  />
                )}
              </span>
            ),
          },
        ]}
      />
    </>
  )
}
