import { useId, useState, type FormEvent } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { t, type Key } from '../i18n'
import { useAction } from '../action'
import { parseList } from '../lib/key-usage'
import { choices } from '../lib/role-diff'
import { useSession } from '../session'
import { ErrorBox, Loading } from '../ui/feedback'
import { FormFooter } from '../ui/FormFooter'

type Schemas = components['schemas']
type Provider = Schemas['IdentityProvider']
type Preset = Schemas['IdentityProviderPreset']
type Kind = Schemas['IdentityProviderKind']
type AuthMethod = Schemas['UpstreamAuthMethod']
type Linking = Schemas['LinkingRule']
type Create = Schemas['CreateIdentityProviderRequest']
type Update = Schemas['UpdateIdentityProviderRequest']

/** What the chooser offers: a preset (its endpoints and mapping are the service's), or one's own endpoints. */
type Choice = Preset | 'oidc' | 'oauth2'
const CHOICES: readonly { choice: Choice; label: Key; kind: Kind; name: string }[] = [
  { choice: 'google', label: 'provider.google', kind: 'oidc', name: 'Google' },
  { choice: 'microsoft', label: 'provider.microsoft', kind: 'oidc', name: 'Microsoft' },
  { choice: 'github', label: 'provider.github', kind: 'oauth2', name: 'GitHub' },
  { choice: 'oidc', label: 'provider.oidc', kind: 'oidc', name: '' },
  { choice: 'oauth2', label: 'provider.oauth2', kind: 'oauth2', name: '' },
]
const ENDPOINTS = [
  ['authorizationEndpoint', 'provider.authorizationEndpoint'],
  ['tokenEndpoint', 'provider.tokenEndpoint'],
  ['userinfoEndpoint', 'provider.userinfoEndpoint'],
] as const
const CLAIMS = [
  ['sub', 'provider.subClaim', 'sub'],
  ['email', 'provider.emailClaim', 'email'],
  ['emailVerified', 'provider.emailVerifiedClaim', 'email_verified'],
  ['username', 'provider.usernameClaim', 'preferred_username'],
] as const

const text = (f: FormData, name: string) => String(f.get(name) ?? '').trim()
const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i])

/** The fields both a creation and an edit send (a blank optional one is left to the service's default). */
function common(f: FormData, custom: boolean) {
  const claimMapping: Schemas['ClaimMapping'] = {}
  if (custom) for (const [key] of CLAIMS) if (text(f, key)) claimMapping[key] = text(f, key)
  return {
    name: text(f, 'name'),
    clientId: text(f, 'clientId'),
    clientSecret: text(f, 'clientSecret'),
    tokenEndpointAuthMethod: (text(f, 'auth') || 'client_secret_basic') as AuthMethod,
    scopes: text(f, 'scopes').split(/\s+/).filter(Boolean),
    claimMapping,
    allowSignup: f.get('allowSignup') === 'on',
    trustEmail: f.get('trustEmail') === 'on',
    linking: (text(f, 'linking') || 'never') as Linking,
    allowedDomains: parseList(text(f, 'domains')),
    defaultRoles: f.getAll('role').map(String),
    showOnLogin: f.get('showOnLogin') === 'on',
  }
}

function createBody(f: FormData, choice: Choice): Create {
  const custom = choice === 'oidc' || choice === 'oauth2'
  const kind = CHOICES.find((c) => c.choice === choice)?.kind ?? 'oidc'
  const { scopes, claimMapping, ...rest } = common(f, custom)
  const body: Create = { ...rest, kind }
  if (!custom) body.preset = choice
  if (scopes.length > 0) body.scopes = scopes
  if (Object.keys(claimMapping).length > 0) body.claimMapping = claimMapping
  if (choice === 'oidc') body.issuer = text(f, 'issuer')
  if (choice === 'oauth2') for (const [key] of ENDPOINTS) body[key] = text(f, key)
  return body
}

/** The PATCH body: only what changed (the secret only when a new one is typed). */
function updateBody(f: FormData, p: Provider): Update {
  const custom = p.preset === null
  const { clientSecret, scopes, claimMapping, ...rest } = common(f, custom)
  const out: Update = {}
  for (const key of [
    'name',
    'clientId',
    'tokenEndpointAuthMethod',
    'allowSignup',
    'trustEmail',
    'linking',
    'showOnLogin',
  ] as const) {
    if (rest[key] !== p[key]) Object.assign(out, { [key]: rest[key] })
  }
  if (clientSecret) out.clientSecret = clientSecret
  if (scopes.length > 0 && !sameList(scopes, p.scopes)) out.scopes = scopes
  if (!sameList(rest.allowedDomains, p.allowedDomains)) out.allowedDomains = rest.allowedDomains
  if (!sameList([...rest.defaultRoles].sort(), [...p.defaultRoles].sort()))
    out.defaultRoles = rest.defaultRoles
  if (custom && CLAIMS.some(([key]) => (claimMapping[key] ?? p.claimMapping[key]) !== p.claimMapping[key]))
    out.claimMapping = { ...p.claimMapping, ...claimMapping }
  if (custom && p.kind === 'oidc' && text(f, 'issuer') !== p.issuer) out.issuer = text(f, 'issuer')
  if (custom && p.kind === 'oauth2') {
    for (const [key] of ENDPOINTS) if (text(f, key) !== (p[key] ?? '')) out[key] = text(f, key)
  }
  return out
}

/** The tenant's roles as default roles of the users the provider creates (and the provider's own). */
function RoleChecks({ held }: { held: readonly string[] }) {
  const session = useSession()
  const canList = session.can('roles:read')
  const roles = useQuery({
    queryKey: ['roles', 'all'],
    queryFn: () => tessera.GET('/api/v1/roles', { params: { query: { limit: 100 } } }),
    enabled: canList,
  })
  const names = choices(
    (roles.data?.items ?? []).map((r) => r.name),
    held,
  )
  return (
    <fieldset>
      <legend>{t('provider.defaultRoles')}</legend>
      <p className="muted">{t('provider.rolesHelp')}</p>
      {canList && roles.isPending && <Loading what={t('provider.rolesWhat')} />}
      <ErrorBox error={roles.error} />
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
 * A provider of the tenant: a new one from a preset or one's own endpoints (`p` absent, POST), or the edit of
 * one (PATCH with what changed; its kind and preset stay). The client secret is asked, never shown.
 */
export function ProviderForm({
  p,
  callbackUrl,
  onSaved,
  onClose,
}: {
  p?: Provider
  callbackUrl: string
  onSaved: (p: Provider) => void
  onClose: () => void
}) {
  const id = useId()
  const queries = useQueryClient()
  const [choice, setChoice] = useState<Choice>(p ? (p.preset ?? p.kind) : 'google')
  const [status, setStatus] = useState('')
  const saved = (provider: Provider) => {
    void queries.invalidateQueries({ queryKey: ['identity-providers'] })
    void queries.invalidateQueries({ queryKey: ['login-providers'] })
    onSaved(provider)
  }
  const create = useAction((body: Create) => tessera.POST('/api/v1/identity-providers', { body }), saved)
  const update = useAction(
    (providerId: string, body: Update) =>
      tessera.PATCH('/api/v1/identity-providers/{id}', { params: { path: { id: providerId } }, body }),
    saved,
  )
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setStatus('')
    const f = new FormData(e.currentTarget)
    if (!p) return void create.run(createBody(f, choice))
    const body = updateBody(f, p)
    if (Object.keys(body).length === 0) setStatus(t('settings.nothing'))
    else void update.run(p.id, body)
  }
  const picked = CHOICES.find((c) => c.choice === choice) ?? CHOICES[0]!
  const custom = choice === 'oidc' || choice === 'oauth2'
  return (
    <form className="panel stack" onSubmit={submit} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{p ? t('provider.edit', { name: p.name }) : t('provider.new')}</h2>
      {p ? (
        <p>{t(picked.label)}</p>
      ) : (
        <fieldset>
          <legend>{t('provider.kind')}</legend>
          <div className="checks">
            {CHOICES.map((c) => (
              <label key={c.choice} className="check">
                <input
                  type="radio"
                  name="choice"
                  value={c.choice}
                  checked={choice === c.choice}
                  onChange={() => setChoice(c.choice)}
                />{' '}
                {t(c.label)}
              </label>
            ))}
          </div>
        </fieldset>
      )}
      <p>
        {t('provider.callback')} <code>{callbackUrl}</code>
      </p>
      <label>
        {t('provider.buttonName')}
        <input name="name" required maxLength={100} defaultValue={p?.name ?? picked.name} key={choice} />
      </label>
      {custom && picked.kind === 'oidc' && (
        <label>
          {t('provider.issuer')}
          <input name="issuer" type="url" required defaultValue={p?.issuer ?? ''} />
        </label>
      )}
      {custom &&
        picked.kind === 'oauth2' &&
        ENDPOINTS.map(([key, label]) => (
          <label key={key}>
            {t(label)}
            <input name={key} type="url" required defaultValue={p?.[key] ?? ''} />
          </label>
        ))}
      <label>
        {t('app.clientId')}
        <input name="clientId" required maxLength={255} defaultValue={p?.clientId} autoComplete="off" />
      </label>
      <label>
        {t('app.secret')}
        <input
          name="clientSecret"
          type="password"
          required={!p}
          maxLength={1024}
          autoComplete="new-password"
          aria-describedby={p ? `${id}-secret` : undefined}
        />
      </label>
      {p && (
        <p id={`${id}-secret`} className="muted">
          {t('provider.secretHelp')}
        </p>
      )}
      <label>
        {t('provider.auth')}
        <select name="auth" defaultValue={p?.tokenEndpointAuthMethod ?? 'client_secret_basic'}>
          <option value="client_secret_basic">{t('provider.basic')}</option>
          <option value="client_secret_post">{t('provider.post')}</option>
        </select>
      </label>
      <label>
        {t('keys.scopes')}
        <input
          name="scopes"
          defaultValue={p?.scopes.join(' ') ?? ''}
          placeholder={custom && picked.kind === 'oidc' ? 'openid email profile' : t('provider.presetOwn')}
          aria-describedby={`${id}-scopes`}
        />
      </label>
      <p id={`${id}-scopes`} className="muted">
        {t('provider.scopesHelp')}
      </p>
      {custom && (
        <fieldset>
          <legend>{t('provider.claims')}</legend>
          {CLAIMS.map(([key, label, standard]) => (
            <label key={key}>
              {t(label)}
              <input name={key} defaultValue={p?.claimMapping[key] ?? ''} placeholder={standard} />
            </label>
          ))}
        </fieldset>
      )}
      <fieldset>
        <legend>{t('provider.who')}</legend>
        <label className="check">
          <input type="checkbox" name="showOnLogin" defaultChecked={p?.showOnLogin ?? true} />{' '}
          {t('provider.showOnLogin')}
        </label>
        <label className="check">
          <input type="checkbox" name="allowSignup" defaultChecked={p?.allowSignup ?? false} />{' '}
          {t('provider.allowSignup')}
        </label>
        <label className="check">
          <input type="checkbox" name="trustEmail" defaultChecked={p?.trustEmail ?? false} />{' '}
          {t('provider.trustEmail')}
        </label>
        <label>
          {t('provider.linking')}
          <select name="linking" defaultValue={p?.linking ?? 'never'}>
            <option value="never">{t('keys.never')}</option>
            <option value="verified_email">{t('provider.linkVerified')}</option>
          </select>
        </label>
        <label>
          {t('provider.domains')}
          <input
            name="domains"
            defaultValue={p?.allowedDomains.join(', ') ?? ''}
            placeholder={t('provider.anyDomain')}
          />
        </label>
      </fieldset>
      <RoleChecks held={p?.defaultRoles ?? []} />
      <FormFooter
        submit={p ? t('user.save') : t('users.create')}
        error={create.error ?? update.error}
        pending={create.pending || update.pending}
        onCancel={onClose}
        status={status}
      />
    </form>
  )
}
