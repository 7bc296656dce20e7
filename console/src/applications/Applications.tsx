import { useState } from 'react'
import { useQuery } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { Link, navigate, useUrlSort } from '../router'
import { useSession } from '../session'
import { when } from '../ui/format'
import { List, usePage } from '../ui/List'
import { ShownOnce } from '../ui/ShownOnce'
import { ClientForm } from './ClientForm'

type Created = components['schemas']['OAuthClientWithSecret']

const LIMIT = 20

/** The Applications screen: the tenant's OAuth clients, and a new one with its secret shown once. */
export function Applications() {
  const session = useSession()
  const page = usePage(LIMIT)
  // Why sorted in the page: the API takes no sort parameter, so List orders the page it loaded.
  const sort = useUrlSort()
  const [creating, setCreating] = useState(false)
  const [created, setCreated] = useState<Created | null>(null)
  const clients = useQuery({
    queryKey: ['oauth-clients', 'list', page.offset],
    queryFn: () =>
      tessera.GET('/api/v1/oauth/clients', {
        params: { query: { limit: page.limit, offset: page.offset } },
      }),
  })
  const open = (c: Created) => navigate(`/applications/${c.id}`)
  return (
    <>
      <h1>Applications</h1>
      <p className="muted">
        Applications sign your users in with Tessera, the tenant’s OpenID provider: a web server with a secret
        (confidential), or a browser, mobile or desktop app with PKCE alone (public).
      </p>
      {created?.clientSecret && (
        <ShownOnce
          name={created.name}
          value={created.clientSecret}
          onDone={() => open(created)}
          label="Client secret"
        />
      )}
      {session.can('oauth-clients:create') && !creating && !created && (
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          Create application
        </button>
      )}
      {creating && (
        <ClientForm
          onClose={() => setCreating(false)}
          onCreated={(c) => {
            setCreating(false)
            // Why stay for a confidential client: its secret is shown only here, before its own page.
            if (c.clientSecret) setCreated(c)
            else open(c)
          }}
        />
      )}
      <List
        what="applications"
        error={clients.error}
        pending={clients.isPending}
        items={clients.data?.items}
        empty="No application yet."
        page={page}
        total={clients.data?.total}
        rowKey={(c) => c.id}
        sort={sort}
        columns={[
          {
            title: 'Name',
            cell: (c) => <Link to={`/applications/${c.id}`}>{c.name}</Link>,
            sortBy: (c) => c.name,
          },
          { title: 'Client ID', cell: (c) => c.clientId, className: 'mono', sortBy: (c) => c.clientId },
          {
            title: 'Type',
            cell: (c) => (c.dynamic ? `${c.type} (registered itself)` : c.type),
            sortBy: (c) => c.type,
          },
          { title: 'Redirect URIs', cell: (c) => c.redirectUris.join(', ') },
          { title: 'Scopes', cell: (c) => c.scopes.join(', ') || '—' },
          { title: 'Created', cell: (c) => when(c.createdAt), sortBy: (c) => c.createdAt },
        ]}
      />
    </>
  )
}
