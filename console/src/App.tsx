import { useEffect, type ReactNode } from 'react'
import { Link, navigate, useLocation } from './router'
import { useSession } from './session'
import { SignIn } from './screens/SignIn'
import { ForgotPassword } from './screens/ForgotPassword'
import { ResetPassword, VerifyEmail } from './screens/EmailLinks'
import { afterSignIn, signInFor } from './lib/next'
import { Overview } from './screens/Overview'
import { Users } from './screens/Users'
import { UserPage } from './screens/UserPage'
import { Roles } from './screens/Roles'
import { RolePage } from './screens/RolePage'
import { Permissions } from './screens/Permissions'
import { Keys } from './screens/Keys'
import { KeyPage } from './screens/KeyPage'
import { Applications } from './applications/Applications'
import { ApplicationPage } from './applications/ApplicationPage'
import { PublishableKeyPage } from './screens/PublishableKeyPage'
import { AuditLog } from './screens/AuditLog'
import { Settings } from './screens/Settings'
import { Account } from './screens/Account'
import { Tenants } from './screens/Tenants'
import { TenantPage } from './screens/TenantPage'
import { IdentityProviders } from './federation/IdentityProviders'
import { LanguageSwitch } from './LanguageSwitch'
import { t, type Key } from './i18n'
import { useLocale } from './ui/i18n'

interface Screen {
  path: string
  /** The screen's name in the catalogue (the menu's link, the page's title). */
  name: Key
  /** Shown in the menu only when the token holds it (the server checks again). */
  permission?: string
  render: () => ReactNode
}

const SCREENS: Screen[] = [
  { path: '/', name: 'screen.overview', render: () => <Overview /> },
  { path: '/users', name: 'screen.users', permission: 'users:read', render: () => <Users /> },
  { path: '/roles', name: 'screen.roles', permission: 'roles:read', render: () => <Roles /> },
  {
    path: '/permissions',
    name: 'screen.permissions',
    permission: 'permissions:read',
    render: () => <Permissions />,
  },
  { path: '/keys', name: 'screen.keys', permission: 'client-keys:read', render: () => <Keys /> },
  {
    path: '/applications',
    name: 'screen.applications',
    permission: 'oauth-clients:read',
    render: () => <Applications />,
  },
  { path: '/audit-log', name: 'screen.auditLog', permission: 'auth:logs', render: () => <AuditLog /> },
  { path: '/settings', name: 'screen.settings', permission: 'tenants:read', render: () => <Settings /> },
  { path: '/account', name: 'screen.account', render: () => <Account /> },
  { path: '/tenants', name: 'screen.tenants', permission: 'tenants:create', render: () => <Tenants /> },
]

/** Screens reached from another screen (Settings), not from the menu; the menu marks their parent. */
const SUBSCREENS: Screen[] = [
  {
    path: '/settings/identity-providers',
    name: 'screen.identityProviders',
    permission: 'identity-providers:read',
    render: () => <IdentityProviders />,
  },
]

/** The page of one item of a screen's list, at `/<screen>/<id>` (its own URL, like every screen). */
const DETAILS: { pattern: RegExp; name: Key; render: (id: string) => ReactNode }[] = [
  { pattern: /^\/users\/([^/]+)$/, name: 'screen.user', render: (id) => <UserPage userId={id} /> },
  { pattern: /^\/keys\/([^/]+)$/, name: 'screen.key', render: (id) => <KeyPage id={id} /> },
  {
    pattern: /^\/keys\/publishable\/([^/]+)$/,
    name: 'screen.publishableKey',
    render: (id) => <PublishableKeyPage id={id} />,
  },
  { pattern: /^\/roles\/([^/]+)$/, name: 'screen.role', render: (id) => <RolePage id={id} /> },
  { pattern: /^\/tenants\/([^/]+)$/, name: 'screen.tenant', render: (id) => <TenantPage id={id} /> },
  {
    pattern: /^\/applications\/([^/]+)$/,
    name: 'screen.application',
    render: (id) => <ApplicationPage id={id} />,
  },
]

function Shell({ path, children }: { path: string; children: ReactNode }) {
  const session = useSession()
  const visible = SCREENS.filter((s) => !s.permission || session.can(s.permission))
  return (
    <>
      <a className="skip" href="#main">
        {t('shell.skip')}
      </a>
      <header className="top">
        <span className="brand">Tessera</span>
        <span className="muted">{session.tenantCode}</span>
        <nav aria-label={t('shell.screens')}>
          <ul>
            {visible.map((s) => {
              const here = s.path === '/' ? path === '/' : path.startsWith(s.path)
              return (
                <li key={s.path}>
                  <Link to={s.path} aria-current={here ? 'page' : undefined}>
                    {t(s.name)}
                  </Link>
                </li>
              )
            })}
          </ul>
        </nav>
        <LanguageSwitch compact />
        <button type="button" onClick={() => void session.signOut()}>
          {t('shell.signOut')}
        </button>
      </header>
      <main id="main">{children}</main>
    </>
  )
}

/** The pages of a mail's link (section 18): shown to anyone, signed in or not, with no menu. */
const PUBLIC: Record<string, () => ReactNode> = {
  '/reset-password': () => <ResetPassword />,
  '/verify-email': () => <VerifyEmail />,
}

export function App() {
  const { path } = useLocation()
  const session = useSession()
  const signingIn = path === '/sign-in'
  // The one other screen for someone not signed in: asking for a reset mail.
  const forgot = path === '/forgot-password'
  const open = PUBLIC[path]
  useEffect(() => {
    if (open) return
    if (!session.signedIn && !signingIn && !forgot) {
      // Why keep the target: a shared link to a screen must land there once its reader has signed in.
      navigate(signInFor(path + window.location.search), true)
    }
    if (session.signedIn && signingIn) navigate(afterSignIn(window.location.search), true)
    if (session.signedIn && forgot) navigate('/', true)
  }, [session.signedIn, signingIn, forgot, open, path])
  const detail = DETAILS.find((d) => d.pattern.test(path))
  const lang = useLocale()
  useEffect(() => {
    if (open) return
    const screen = detail?.name ?? [...SCREENS, ...SUBSCREENS].find((s) => s.path === path)?.name
    const title = signingIn
      ? t('shell.signInTitle')
      : forgot
        ? t('shell.forgotTitle')
        : screen
          ? t(screen)
          : t('shell.notFound')
    document.title = t('shell.title', { title })
  }, [path, signingIn, forgot, detail, open, lang])

  if (open) return open()
  if (!session.signedIn) {
    if (!signingIn && !forgot) return null
    return (
      <>
        {signingIn ? <SignIn /> : <ForgotPassword />}
        <footer className="language-footer">
          <LanguageSwitch />
        </footer>
      </>
    )
  }
  const id = detail?.pattern.exec(path)?.[1]
  const screen = [...SCREENS, ...SUBSCREENS].find((s) => s.path === path)
  return (
    <Shell path={path}>
      {detail && id ? (
        detail.render(decodeURIComponent(id))
      ) : screen ? (
        screen.render()
      ) : (
        <>
          <h1>{t('shell.notFound')}</h1>
          <p>
            {t('shell.noScreen')} <Link to="/">{t('shell.toOverview')}</Link>
          </p>
        </>
      )}
    </Shell>
  )
}
