import { useState, type FormEvent } from 'react'
import { useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { t, type Key } from '../i18n'
import { useAction } from '../action'
import { FormFooter } from '../ui/FormFooter'

type Schemas = components['schemas']
type OAuthClient = Schemas['OAuthClient']
type ClientType = Schemas['OAuthClientType']
type AuthMethod = Schemas['TokenEndpointAuthMethod']
type GrantType = Schemas['OAuthGrantType']
type Created = Schemas['OAuthClientWithSecret']
type Update = Schemas['UpdateOAuthClientRequest']

/** The API's bounds and defaults (contract section 23, "Applications"). */
const MAX_REDIRECTS = 10
const OIDC_SCOPES = ['openid', 'profile', 'email', 'offline_access', 'roles'] as const
const DEFAULT_SCOPES: readonly string[] = ['openid', 'profile', 'email', 'offline_access']
const GRANTS: readonly GrantType[] = ['authorization_code', 'refresh_token', 'client_credentials']
const DEFAULT_GRANTS: readonly GrantType[] = ['authorization_code', 'refresh_token']
const SECRET_METHODS: readonly [AuthMethod, Key][] = [
  ['client_secret_basic', 'client.basic'],
  ['client_secret_post', 'client.post'],
]

/** What the form edits: every field of the client that a PATCH may change. */
interface Fields {
  name: string
  redirectUris: string[]
  postLogoutRedirectUris: string[]
  tokenEndpointAuthMethod: AuthMethod
  grantTypes: GrantType[]
  scopes: string[]
  firstParty: boolean
  backchannelLogoutUri: string | null
  logoUri: string | null
  clientUri: string | null
}

// Why split on white space only: a redirect URI never holds any (the document's pattern), while a comma
// may sit in its query, and a scope may hold one too.
const words = (text: string) => [...new Set(text.split(/\s+/).filter(Boolean))]
const uriOrNull = (value: FormDataEntryValue | null) => String(value ?? '').trim() || null

function fieldsOf(form: HTMLFormElement, type: ClientType): Fields {
  const f = new FormData(form)
  const method = SECRET_METHODS.find(([m]) => m === f.get('auth'))?.[0] ?? 'client_secret_basic'
  return {
    name: String(f.get('name') ?? '').trim(),
    redirectUris: words(String(f.get('redirects') ?? '')),
    postLogoutRedirectUris: words(String(f.get('logoutRedirects') ?? '')),
    tokenEndpointAuthMethod: type === 'public' ? 'none' : method,
    grantTypes: GRANTS.filter((g) => f.getAll('grant').includes(g)),
    scopes: [...new Set([...f.getAll('scope').map(String), ...words(String(f.get('otherScopes') ?? ''))])],
    firstParty: f.get('firstParty') === 'on',
    backchannelLogoutUri: uriOrNull(f.get('backchannel')),
    logoUri: uriOrNull(f.get('logo')),
    clientUri: uriOrNull(f.get('home')),
  }
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && new Set([...a, ...b]).size === a.length
// Why in order: the first redirect URI is the one the quick start shows.
const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i])

/** The PATCH body: only what changed, so an untouched field is neither checked again nor audited. */
function changes(before: OAuthClient, after: Fields): Update {
  const out: Update = {}
  if (after.name !== before.name) out.name = after.name
  if (!sameList(after.redirectUris, before.redirectUris)) out.redirectUris = after.redirectUris
  if (!sameList(after.postLogoutRedirectUris, before.postLogoutRedirectUris))
    out.postLogoutRedirectUris = after.postLogoutRedirectUris
  if (after.tokenEndpointAuthMethod !== before.tokenEndpointAuthMethod)
    out.tokenEndpointAuthMethod = after.tokenEndpointAuthMethod
  if (!sameSet(after.grantTypes, before.grantTypes)) out.grantTypes = after.grantTypes
  if (!sameSet(after.scopes, before.scopes)) out.scopes = after.scopes
  if (after.firstParty !== before.firstParty) out.firstParty = after.firstParty
  if (after.backchannelLogoutUri !== before.backchannelLogoutUri)
    out.backchannelLogoutUri = after.backchannelLogoutUri
  if (after.logoUri !== before.logoUri) out.logoUri = after.logoUri
  if (after.clientUri !== before.clientUri) out.clientUri = after.clientUri
  return out
}

/** What the form can check before the service does: the counts of the lists. */
function problemOf(fields: Fields): string {
  const count = fields.redirectUris.length
  if (count < 1 || count > MAX_REDIRECTS) return t('client.redirectCount', { max: MAX_REDIRECTS, count })
  if (fields.postLogoutRedirectUris.length > MAX_REDIRECTS)
    return t('client.logoutCount', { max: MAX_REDIRECTS })
  if (fields.grantTypes.length === 0) return t('client.grantOne')
  return ''
}

function TypeChoice({ type, onType }: { type: ClientType; onType: (type: ClientType) => void }) {
  const choices: [ClientType, string][] = [
    ['confidential', t('client.confidential')],
    ['public', t('client.public')],
  ]
  return (
    <fieldset>
      <legend>{t('app.type')}</legend>
      {choices.map(([value, label]) => (
        <label key={value} className="check">
          <input
            type="radio"
            name="type"
            value={value}
            checked={type === value}
            onChange={() => onType(value)}
          />{' '}
          {label}
        </label>
      ))}
    </fieldset>
  )
}

function ScopeChecks({ held }: { held: readonly string[] }) {
  const known: readonly string[] = OIDC_SCOPES
  const others = held.filter((s) => !known.includes(s))
  return (
    <fieldset>
      <legend>{t('keys.scopes')}</legend>
      <p className="muted">{t('client.scopesHelp')}</p>
      <div className="checks">
        {OIDC_SCOPES.map((s) => (
          <label key={s} className="check">
            <input type="checkbox" name="scope" value={s} defaultChecked={held.includes(s)} /> {s}
          </label>
        ))}
      </div>
      <label>
        {t('client.otherScopes')}
        <input name="otherScopes" defaultValue={others.join(' ')} />
      </label>
    </fieldset>
  )
}

function GrantChecks({ type, held }: { type: ClientType; held: readonly GrantType[] }) {
  // Why hidden for a public client: client_credentials needs a secret, and the service refuses it.
  const offered = type === 'public' ? GRANTS.filter((g) => g !== 'client_credentials') : GRANTS
  return (
    <fieldset>
      <legend>{t('app.grantTypes')}</legend>
      <div className="checks">
        {offered.map((g) => (
          <label key={g} className="check">
            <input type="checkbox" name="grant" value={g} defaultChecked={held.includes(g)} /> {g}
          </label>
        ))}
      </div>
    </fieldset>
  )
}

/** The URIs of logout and of the consent page, which most applications leave empty. */
function MoreUris({ c }: { c?: OAuthClient }) {
  return (
    <details>
      <summary>{t('client.more')}</summary>
      <div className="stack">
        <label>
          {t('client.logoutUris')}
          <textarea name="logoutRedirects" rows={2} defaultValue={c?.postLogoutRedirectUris.join('\n')} />
        </label>
        <label>
          {t('client.backchannel')}
          <input name="backchannel" type="url" defaultValue={c?.backchannelLogoutUri ?? ''} />
        </label>
        <label>
          {t('client.logoUri')}
          <input name="logo" type="url" defaultValue={c?.logoUri ?? ''} />
        </label>
        <label>
          {t('client.homeUri')}
          <input name="home" type="url" defaultValue={c?.clientUri ?? ''} />
        </label>
      </div>
    </details>
  )
}

/**
 * An application's settings: a new one (`c` absent; its type chosen here, POST) or the edit of one (PATCH
 * with only what changed; the type is fixed). `onCreated` gets the new client with its secret.
 */
export function ClientForm({
  c,
  onCreated,
  onClose,
}: {
  c?: OAuthClient
  onCreated?: (created: Created) => void
  onClose?: () => void
}) {
  const queries = useQueryClient()
  const [type, setType] = useState<ClientType>(c?.type ?? 'confidential')
  const [problem, setProblem] = useState('')
  const [status, setStatus] = useState('')
  const create = useAction(
    (body: Schemas['CreateOAuthClientRequest']) => tessera.POST('/api/v1/oauth/clients', { body }),
    (created) => {
      void queries.invalidateQueries({ queryKey: ['oauth-clients'] })
      onCreated?.(created)
    },
  )
  const update = useAction(
    (id: string, body: Update) =>
      tessera.PATCH('/api/v1/oauth/clients/{id}', { params: { path: { id } }, body }),
    (updated) => {
      queries.setQueryData(['oauth-clients', updated.id], updated)
      void queries.invalidateQueries({ queryKey: ['oauth-clients', 'list'] })
      setStatus(t('tenant.saved'))
    },
  )
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setStatus('')
    const fields = fieldsOf(e.currentTarget, type)
    const wrong = problemOf(fields)
    setProblem(wrong)
    if (wrong) return
    if (!c) {
      const { backchannelLogoutUri, logoUri, clientUri, ...rest } = fields
      void create.run({
        ...rest,
        type,
        ...(backchannelLogoutUri ? { backchannelLogoutUri } : {}),
        ...(logoUri ? { logoUri } : {}),
        ...(clientUri ? { clientUri } : {}),
      })
      return
    }
    const body = changes(c, fields)
    if (Object.keys(body).length === 0) setStatus(t('settings.nothing'))
    else void update.run(c.id, body)
  }
  const heading = c ? 'client-edit' : 'client-new'
  return (
    <form className="panel stack" onSubmit={submit} aria-labelledby={heading}>
      <h2 id={heading}>{c ? t('screen.settings') : t('client.new')}</h2>
      <label>
        {t('tenants.name')}
        <input name="name" required maxLength={100} defaultValue={c?.name} />
      </label>
      {!c && <TypeChoice type={type} onType={setType} />}
      <label>
        {t('app.redirectUris')}
        <textarea
          name="redirects"
          rows={3}
          required
          defaultValue={c?.redirectUris.join('\n')}
          aria-describedby={`${heading}-redirects`}
        />
      </label>
      <p id={`${heading}-redirects`} className="muted">
        {t('client.redirectHelp', { max: MAX_REDIRECTS })}
      </p>
      <ScopeChecks held={c?.scopes ?? DEFAULT_SCOPES} />
      <GrantChecks key={type} type={type} held={c?.grantTypes ?? DEFAULT_GRANTS} />
      {type === 'confidential' && (
        <label>
          {t('app.clientAuth')}
          <select name="auth" defaultValue={c?.tokenEndpointAuthMethod ?? 'client_secret_basic'}>
            {SECRET_METHODS.map(([m, label]) => (
              <option key={m} value={m}>
                {t(label)}
              </option>
            ))}
          </select>
        </label>
      )}
      <label className="check">
        <input type="checkbox" name="firstParty" defaultChecked={c?.firstParty ?? false} />{' '}
        {t('client.firstParty')}
      </label>
      <MoreUris c={c} />
      {problem && (
        <p role="alert" className="error">
          {problem}
        </p>
      )}
      <FormFooter
        submit={c ? t('user.save') : t('users.create')}
        error={create.error ?? update.error}
        pending={create.pending || update.pending}
        onCancel={onClose}
        status={status}
      />
    </form>
  )
}
