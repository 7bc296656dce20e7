import { useState, type FormEvent } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { Link, navigate } from '../router'
import { ConfirmButton } from '../ui/ConfirmButton'
import { useSession } from '../session'
import { UserPermissions } from '../users/UserPermissions'
import { UserPasskeys } from '../passkeys/UserPasskeys'
import { useAction } from '../action'
import { Empty, ErrorBox, Loading } from '../ui/feedback'
import { FormFooter } from '../ui/FormFooter'
import { when } from '../ui/format'
import { List } from '../ui/List'
import { PasswordRule, fitting } from '../users/PasswordRule'
import { t } from '../i18n'

type User = components['schemas']['User']
type Status = User['status']

const nameOf = (u: User) => u.email ?? u.username ?? u.cpf_cnpj ?? u.id

function Details({ user }: { user: User }) {
  const session = useSession()
  const queries = useQueryClient()
  const refresh = () => void queries.invalidateQueries({ queryKey: ['users'] })
  const save = useAction(
    (body: { email?: string; username?: string; status: Status }) =>
      tessera.PATCH('/api/v1/users/{userId}', { params: { path: { userId: user.id } }, body }),
    refresh,
  )
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const f = new FormData(e.currentTarget)
    const email = String(f.get('email') ?? '').trim()
    const username = String(f.get('username') ?? '').trim()
    void save.run({
      ...(email && email !== user.email ? { email } : {}),
      ...(username && username !== user.username ? { username } : {}),
      status: String(f.get('status')) as Status,
    })
  }
  const editable = session.can('users:update')
  return (
    <section aria-labelledby="details" className="panel">
      <h2 id="details">{t('user.details')}</h2>
      <dl className="facts">
        <dt>{t('users.status')}</dt>
        <dd>{user.status}</dd>
        <dt>{t('user.emailVerified')}</dt>
        <dd>{user.emailVerified ? t('common.yes') : t('common.no')}</dd>
        <dt>{t('user.totp')}</dt>
        <dd>{user.otpEnabled ? t('common.on') : t('common.off')}</dd>
        <dt>{t('user.created')}</dt>
        <dd>{when(user.createdAt)}</dd>
        <dt>{t('users.lastLogin')}</dt>
        <dd>{when(user.lastLoginAt)}</dd>
      </dl>
      {editable && (
        <form onSubmit={submit} className="stack">
          <label>
            {t('users.email')}
            <input name="email" type="email" defaultValue={user.email ?? ''} />
          </label>
          <label>
            {t('users.username')}
            <input name="username" defaultValue={user.username ?? ''} />
          </label>
          <label>
            {t('users.status')}
            <select name="status" defaultValue={user.status}>
              <option value="ACTIVE">{t('status.ACTIVE')}</option>
              <option value="INACTIVE">{t('user.inactiveDisabled')}</option>
              <option value="SUSPENDED">{t('status.SUSPENDED')}</option>
            </select>
          </label>
          <FormFooter submit={t('user.save')} error={save.error} pending={save.pending} layout="stacked" />
        </form>
      )}
    </section>
  )
}

function Roles({ user }: { user: User }) {
  const session = useSession()
  const queries = useQueryClient()
  const refresh = () => void queries.invalidateQueries({ queryKey: ['users'] })
  const roles = useQuery({
    queryKey: ['roles', 'all'],
    queryFn: () => tessera.GET('/api/v1/roles', { params: { query: { limit: 100 } } }),
    enabled: session.can('roles:assign'),
  })
  const assign = useAction(
    (roleName: string) => tessera.POST('/api/v1/roles/assign', { body: { userId: user.id, roleName } }),
    refresh,
  )
  const remove = useAction(
    (roleName: string) => tessera.POST('/api/v1/roles/remove', { body: { userId: user.id, roleName } }),
    refresh,
  )
  const others = (roles.data?.items ?? []).filter((r) => !user.roles.includes(r.name))
  return (
    <section aria-labelledby="roles" className="panel">
      <h2 id="roles">{t('screen.roles')}</h2>
      {user.roles.length === 0 ? (
        <Empty>{t('user.noRole')}</Empty>
      ) : (
        <ul className="chips">
          {user.roles.map((r) => (
            <li key={r}>
              {r}
              {session.can('roles:assign') && (
                <button
                  type="button"
                  className="danger-quiet"
                  onClick={() => void remove.run(r)}
                  aria-label={t('user.removeRole', { name: r })}
                >
                  {t('user.remove')}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {session.can('roles:assign') && others.length > 0 && (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault()
            void assign.run(String(new FormData(e.currentTarget).get('role')))
          }}
        >
          <label>
            {t('user.roleToAssign')}
            <select name="role">
              {others.map((r) => (
                <option key={r.id} value={r.name}>
                  {r.name}
                </option>
              ))}
            </select>
          </label>
          <FormFooter submit={t('user.assign')} pending={assign.pending} layout="inline" />
        </form>
      )}
      <ErrorBox error={assign.error ?? remove.error} />
    </section>
  )
}

function Sessions({ user }: { user: User }) {
  const queries = useQueryClient()
  const sessions = useQuery({
    queryKey: ['users', user.id, 'sessions'],
    queryFn: () => tessera.GET('/api/v1/users/{userId}/sessions', { params: { path: { userId: user.id } } }),
  })
  const revoke = useAction(
    () => tessera.DELETE('/api/v1/users/{userId}/sessions', { params: { path: { userId: user.id } } }),
    () => void queries.invalidateQueries({ queryKey: ['users', user.id, 'sessions'] }),
  )
  return (
    <section aria-labelledby="sessions" className="panel">
      <h2 id="sessions">{t('account.sessions')}</h2>
      <List
        what={t('account.sessionsWhat')}
        error={sessions.error ?? revoke.error}
        pending={sessions.isPending}
        items={sessions.data?.items ?? []}
        empty={t('account.noSession')}
      >
        {(items) => (
          <>
            <ul>
              {items.map((s) => (
                <li key={s.id}>
                  {t('user.sessionLine', {
                    when: when(s.lastUsedAt),
                    ip: s.ip ?? t('account.unknownIp'),
                    agent: s.userAgent ?? t('account.unknownAgent'),
                  })}
                </li>
              ))}
            </ul>
            <button
              type="button"
              className="danger-quiet"
              onClick={() => void revoke.run()}
              disabled={revoke.pending}
            >
              {t('user.revokeAll')}
            </button>
          </>
        )}
      </List>
    </section>
  )
}

function Acts({ user }: { user: User }) {
  const [done, setDone] = useState('')
  const reset = useAction(
    async (password: string) =>
      tessera.PUT('/api/v1/users/{userId}/password', {
        params: { path: { userId: user.id } },
        body: { password: fitting(password), revokeSessions: true },
      }),
    () => setDone(t('user.resetDone')),
  )
  const unlock = useAction(
    () => tessera.POST('/api/v1/users/{userId}/unlock', { params: { path: { userId: user.id } } }),
    () => setDone(t('user.unlockDone')),
  )
  const verify = useAction(
    () =>
      tessera.POST('/api/v1/users/{userId}/email-verification', { params: { path: { userId: user.id } } }),
    () => setDone(t('account.mailSent')),
  )
  return (
    <section aria-labelledby="acts" className="panel">
      <h2 id="acts">{t('user.acts')}</h2>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault()
          void reset.run(String(new FormData(e.currentTarget).get('password')))
        }}
      >
        <label>
          {t('account.new')}
          <input
            name="password"
            type="password"
            autoComplete="new-password"
            required
            aria-describedby="reset-password-rule"
          />
        </label>
        <PasswordRule id="reset-password-rule" />
        <FormFooter submit={t('user.reset')} layout="inline" />
      </form>
      <div className="row">
        <button type="button" onClick={() => void unlock.run()}>
          {t('user.unlock')}
        </button>
        {user.email && !user.emailVerified && (
          <button type="button" onClick={() => void verify.run()}>
            {t('user.sendVerification')}
          </button>
        )}
      </div>
      <p role="status">{done}</p>
      <ErrorBox error={reset.error ?? unlock.error ?? verify.error} />
    </section>
  )
}

/** Deleting the user, asked once more: its sessions end and its page goes with it. */
function Delete({ user, name }: { user: User; name: string }) {
  const queries = useQueryClient()
  const remove = useAction(
    () => tessera.DELETE('/api/v1/users/{userId}', { params: { path: { userId: user.id } } }),
    () => {
      void queries.invalidateQueries({ queryKey: ['users'] })
      navigate(`/users?${new URLSearchParams({ deleted: name })}`)
    },
  )
  return (
    <section aria-labelledby="delete-user" className="panel">
      <h2 id="delete-user">{t('user.delete')}</h2>
      <p className="muted">{t('user.deleteHelp')}</p>
      <ConfirmButton
        label={t('user.deleteName', { name })}
        confirm={t('user.deleteConfirm')}
        warning={t('common.undone')}
        onConfirm={() => void remove.run()}
      />
      <ErrorBox error={remove.error} />
    </section>
  )
}

/**
 * Delete, offered only when the hierarchy rule lets the caller act on this user: the user's highest level
 * strictly below the caller's (section 6). Read from the tenant's roles; without roles:read the service judges.
 */
function MayDelete({ user, name }: { user: User; name: string }) {
  const session = useSession()
  const roles = useQuery({
    queryKey: ['roles', 'all'],
    queryFn: () => tessera.GET('/api/v1/roles', { params: { query: { limit: 100 } } }),
    enabled: session.can('roles:read'),
  })
  if (session.can('roles:read') && !session.can('admin:*')) {
    if (!roles.data) return null
    const level = (names: readonly string[]) =>
      Math.max(-1, ...roles.data.items.filter((r) => names.includes(r.name)).map((r) => r.level))
    if (level(user.roles) >= level(tessera.claims()?.roles ?? [])) return null
  }
  return <Delete user={user} name={name} />
}

export function UserPage({ userId }: { userId: string }) {
  const session = useSession()
  const user = useQuery({
    queryKey: ['users', userId],
    queryFn: () => tessera.GET('/api/v1/users/{userId}', { params: { path: { userId } } }),
  })
  const u = user.data
  return (
    <>
      <p>
        <Link to="/users">← {t('screen.users')}</Link>
      </p>
      <h1>{u ? t('user.title', { name: nameOf(u) }) : t('screen.user')}</h1>
      <ErrorBox error={user.error} />
      {user.isPending && <Loading what={t('user.what')} />}
      {u && (
        <div className="grid">
          <Details user={u} />
          <Roles user={u} />
          <UserPermissions user={u} />
          <Sessions user={u} />
          <UserPasskeys userId={u.id} />
          {session.can('users:update') && <Acts user={u} />}
          {session.can('users:delete') && u.id !== session.userId && <MayDelete user={u} name={nameOf(u)} />}
        </div>
      )}
    </>
  )
}
