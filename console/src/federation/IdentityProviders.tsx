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
import { t } from '../i18n'

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
      setStatus(t('idp.deleted', { name: p.name }))
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
        <Link to="/settings">← {t('screen.settings')}</Link>
      </p>
      <h1>{t('screen.identityProviders')}</h1>
      <p className="muted">{t('idp.help')}</p>
      <section aria-labelledby="callback" className="panel">
        <h2 id="callback">{t('idp.callback')}</h2>
        <p>{t('idp.register')}</p>
        <p>
          <code>{callbackUrl}</code> <CopyButton text={callbackUrl} name={t('idp.copyCallback')} />
        </p>
      </section>
      {session.can('identity-providers:create') && editing === null && (
        <button type="button" className="primary" onClick={() => setEditing('new')}>
          {t('idp.add')}
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
            setStatus(editing === 'new' ? t('idp.added', { name: p.name }) : t('idp.saved', { name: p.name }))
          }}
        />
      )}
      <p role="status">{status}</p>
      <List
        what={t('idp.what')}
        error={providers.error ?? remove.error}
        pending={providers.isPending}
        items={providers.data?.items}
        empty={t('idp.none')}
        page={page}
        total={providers.data?.total}
        rowKey={(p) => p.id}
        columns={[
          { title: t('tenants.name'), cell: (p) => p.name },
          { title: t('idp.kind'), cell: kindOf },
          { title: t('app.clientId'), cell: (p) => p.clientId, className: 'mono' },
          { title: t('idp.onSignIn'), cell: (p) => (p.showOnLogin ? t('common.yes') : t('common.no')) },
          {
            title: t('idp.newAccounts'),
            cell: (p) => (p.allowSignup ? t('idp.createdAtFirst') : t('common.no')),
          },
          {
            title: t('tenants.actions'),
            cell: (p) => (
              <span className="row">
                {session.can('identity-providers:update') && (
                  <button
                    type="button"
                    aria-label={t('provider.edit', { name: p.name })}
                    onClick={() => setEditing(p)}
                  >
                    {t('tenant.edit')}
                  </button>
                )}
                {session.can('identity-providers:delete') && (
                  <ConfirmButton
                    label={t('user.deleteName', { name: p.name })}
                    confirm={t('idp.deleteIt')}
                    warning={t('idp.deleteWarning')}
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
