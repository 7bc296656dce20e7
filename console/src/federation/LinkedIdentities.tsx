import { useState, type ReactNode } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { TesseraError } from '@tessera/client'
import { tessera } from '../api'
import { useAction } from '../action'
import { useSession } from '../session'
import { ConfirmButton } from '../ui/ConfirmButton'
import { ErrorBox } from '../ui/feedback'
import { when } from '../ui/format'
import { List } from '../ui/List'
import { federationError, startFederation, takeReturn } from './flow'
import { t } from '../i18n'

/** An unlink refused because nothing else would sign the person in, in words; any other error as usual. */
function showError(error: unknown): ReactNode {
  if (error instanceof TesseraError && error.code === 'LAST_SIGN_IN_METHOD') {
    return (
      <p role="alert" className="error">
        {t('linked.only')}
      </p>
    )
  }
  return <ErrorBox error={error} />
}

/**
 * Account → Linked identities (contract section 24, "A person's own links"): the person's identities at the
 * tenant's other providers, "Unlink", and "Link {provider}" for each provider of the sign-in page not linked
 * yet. A link leaves for the provider and comes back here, where the outcome is said.
 */
export function LinkedIdentities() {
  const session = useSession()
  const queries = useQueryClient()
  const [back] = useState(() => {
    const returned = takeReturn()
    return returned?.intent === 'link' ? returned : null
  })
  const [status, setStatus] = useState('')
  const identities = useQuery({
    queryKey: ['me', 'identities'],
    queryFn: () => tessera.GET('/api/v1/me/identities'),
  })
  const providers = useQuery({
    queryKey: ['login-providers', session.tenantCode.toLowerCase()],
    queryFn: () =>
      tessera.GET('/api/v1/login/providers', { params: { query: { tenantCode: session.tenantCode } } }),
    staleTime: 60_000,
  })
  const unlink = useAction(
    (identity: { id: string; providerName: string }) =>
      tessera
        .DELETE('/api/v1/me/identities/{id}', { params: { path: { id: identity.id } } })
        .then(() => identity),
    (identity) => {
      setStatus(t('linked.unlinked', { name: identity.providerName }))
      void queries.invalidateQueries({ queryKey: ['me', 'identities'] })
    },
  )
  // Why a token first: the authorize step names no user, the single-use token does (and asks a recent sign-in).
  const link = useAction(
    (provider: { id: string; name: string }) =>
      tessera.POST('/api/v1/me/identities/link-token').then((r) => ({ provider, token: r.linkToken })),
    ({ provider, token }) => void startFederation(session.tenantCode, provider, token),
  )
  // Why hide on 404: a service without section 24's links has nothing to show here.
  if (identities.error instanceof TesseraError && identities.error.status === 404) return null
  const linked = new Set((identities.data?.items ?? []).map((i) => i.providerId))
  // Why from the list: a link comes back with no fragment, and so does one abandoned at the provider.
  const backStatus =
    back && !back.error && identities.data?.items.some((i) => i.providerName === back.providerName)
      ? t('linked.linked', { name: back.providerName })
      : ''
  const linkable = identities.data ? (providers.data?.items ?? []).filter((p) => !linked.has(p.id)) : []
  if (identities.data?.items.length === 0 && linkable.length === 0 && !back) return null
  return (
    <section aria-labelledby="linked-identities" className="panel">
      <h2 id="linked-identities">{t('linked.title')}</h2>
      {back?.error && (
        <p role="alert" className="error">
          {federationError(back.error, back.providerName)}
        </p>
      )}
      <List
        what={t('linked.what')}
        error={identities.error ?? unlink.error ?? link.error}
        showError={showError}
        pending={identities.isPending}
        items={identities.data?.items}
        empty={t('linked.none')}
      >
        {(rows) => (
          <ul className="list">
            {rows.map((i) => (
              <li key={i.id}>
                <span>
                  <strong>{i.providerName}</strong> · {i.email ?? i.subject} ·{' '}
                  {t('linked.on', { when: when(i.createdAt) })}
                </span>
                <ConfirmButton
                  label={t('linked.unlink', { name: i.providerName })}
                  confirm={t('linked.unlinkIt')}
                  warning={t('linked.warning', { name: i.providerName })}
                  onConfirm={() => void unlink.run(i)}
                />
              </li>
            ))}
          </ul>
        )}
      </List>
      {linkable.length > 0 && (
        <div className="row">
          {linkable.map((p) => (
            <button key={p.id} type="button" disabled={link.pending} onClick={() => void link.run(p)}>
              {t('linked.link', { name: p.name })}
            </button>
          ))}
        </div>
      )}
      <p role="status">{status || backStatus}</p>
    </section>
  )
}
