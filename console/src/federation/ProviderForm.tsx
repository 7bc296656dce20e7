import { useId, useState, type FormEvent } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
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
const CHOICES: readonly { choice: Choice; label: string; kind: Kind; name: string }[] = [
  { choice: 'google', label: 'Google', kind: 'oidc', name: 'Google' },
  { choice: 'microsoft', label: 'Microsoft (Entra ID)', kind: 'oidc', name: 'Microsoft' },
  { choice: 'github', label: 'GitHub', kind: 'oauth2', name: 'GitHub' },
  { choice: 'oidc', label: 'Another OpenID Connect provider', kind: 'oidc', name: '' },
  { choice: 'oauth2', label: 'Another OAuth 2.0 provider', kind: 'oauth2', name: '' },
]
const ENDPOINTS = [
  ['authorizationEndpoint', 'Authorization endpoint'],
  ['tokenEndpoint', 'Token endpoint'],
  ['userinfoEndpoint', 'Userinfo endpoint'],
] as const
const CLAIMS = [
  ['sub', 'Subject claim', 'sub'],
  ['email', 'Email claim', 'email'],
  ['emailVerified', 'Email verified claim', 'email_verified'],
  ['username', 'Username claim', 'preferred_username'],
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
      <legend>Default roles</legend>
      <p className="muted">
        Given to every user this provider creates. A role with an administration permission is refused.
      </p>
      {canList && roles.isPending && <Loading what="roles" />}
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
    if (Object.keys(body).length === 0) setStatus('Nothing changed.')
    else void update.run(p.id, body)
  }
  const picked = CHOICES.find((c) => c.choice === choice) ?? CHOICES[0]!
  const custom = choice === 'oidc' || choice === 'oauth2'
  return (
    <form className="panel stack" onSubmit={submit} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{p ? `Edit ${p.name}` : 'New identity provider'}</h2>
      {p ? (
        <p>{picked.label}</p>
      ) : (
        <fieldset>
          <legend>Provider</legend>
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
                {c.label}
              </label>
            ))}
          </div>
        </fieldset>
      )}
      <p>
        Register this callback URL at the provider: <code>{callbackUrl}</code>
      </p>
      <label>
        Name on the sign-in button
        <input name="name" required maxLength={100} defaultValue={p?.name ?? picked.name} key={choice} />
      </label>
      {custom && picked.kind === 'oidc' && (
        <label>
          Issuer URL
          <input name="issuer" type="url" required defaultValue={p?.issuer ?? ''} />
        </label>
      )}
      {custom &&
        picked.kind === 'oauth2' &&
        ENDPOINTS.map(([key, label]) => (
          <label key={key}>
            {label}
            <input name={key} type="url" required defaultValue={p?.[key] ?? ''} />
          </label>
        ))}
      <label>
        Client ID
        <input name="clientId" required maxLength={255} defaultValue={p?.clientId} autoComplete="off" />
      </label>
      <label>
        Client secret
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
          Stored encrypted and never shown. Leave it empty to keep the current one.
        </p>
      )}
      <label>
        How Tessera authenticates to the token endpoint
        <select name="auth" defaultValue={p?.tokenEndpointAuthMethod ?? 'client_secret_basic'}>
          <option value="client_secret_basic">HTTP Basic (the default)</option>
          <option value="client_secret_post">In the form body</option>
        </select>
      </label>
      <label>
        Scopes
        <input
          name="scopes"
          defaultValue={p?.scopes.join(' ') ?? ''}
          placeholder={custom && picked.kind === 'oidc' ? 'openid email profile' : 'the preset’s own'}
          aria-describedby={`${id}-scopes`}
        />
      </label>
      <p id={`${id}-scopes`} className="muted">
        Separated by spaces; leave empty for the default.
      </p>
      {custom && (
        <fieldset>
          <legend>Where the person’s details come from</legend>
          {CLAIMS.map(([key, label, standard]) => (
            <label key={key}>
              {label}
              <input name={key} defaultValue={p?.claimMapping[key] ?? ''} placeholder={standard} />
            </label>
          ))}
        </fieldset>
      )}
      <fieldset>
        <legend>Who may sign in</legend>
        <label className="check">
          <input type="checkbox" name="showOnLogin" defaultChecked={p?.showOnLogin ?? true} /> Show on the
          sign-in page
        </label>
        <label className="check">
          <input type="checkbox" name="allowSignup" defaultChecked={p?.allowSignup ?? false} /> Create an
          account at a first sign-in
        </label>
        <label className="check">
          <input type="checkbox" name="trustEmail" defaultChecked={p?.trustEmail ?? false} /> Take the
          provider’s email as verified even when it does not say so
        </label>
        <label>
          Link an existing account
          <select name="linking" defaultValue={p?.linking ?? 'never'}>
            <option value="never">Never</option>
            <option value="verified_email">When the verified email matches one account</option>
          </select>
        </label>
        <label>
          Email domains that may sign up
          <input name="domains" defaultValue={p?.allowedDomains.join(', ') ?? ''} placeholder="any domain" />
        </label>
      </fieldset>
      <RoleChecks held={p?.defaultRoles ?? []} />
      <FormFooter
        submit={p ? 'Save changes' : 'Create'}
        error={create.error ?? update.error}
        pending={create.pending || update.pending}
        onCancel={onClose}
        status={status}
      />
    </form>
  )
}
