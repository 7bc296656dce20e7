import { Fragment } from 'react'
import { useQuery } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { num } from '../ui/i18n'
import { t, type Key } from '../i18n'
import { tenantActions } from '../lib/tenant-actions'
import { Link } from '../router'
import { useSession } from '../session'
import { TenantDelete, TenantEdit } from '../tenants/TenantEdit'
import { ErrorBox, Loading } from '../ui/feedback'
import { when } from '../ui/format'

type Tenant = components['schemas']['Tenant']

function Details({ t: tn }: { t: Tenant }) {
  return (
    <section aria-labelledby="tenant-details" className="panel">
      <h2 id="tenant-details">{t('user.details')}</h2>
      <dl className="facts">
        <dt>{t('tenants.name')}</dt>
        <dd>{tn.name}</dd>
        <dt>{t('tenants.code')}</dt>
        <dd>
          <code>{tn.code}</code>
        </dd>
        <dt>{t('users.status')}</dt>
        <dd>{tn.status}</dd>
        <dt>{t('tenants.database')}</dt>
        <dd>
          {tn.database.dedicated
            ? t('tenants.own', { where: `${tn.database.host ?? ''}/${tn.database.database ?? ''}` })
            : t('tenants.shared')}
        </dd>
        <dt>{t('tenant.signInWith')}</dt>
        <dd>{tn.auth_config.loginIdentifiers.join(', ')}</dd>
        <dt>{t('user.created')}</dt>
        <dd>{when(tn.createdAt)}</dd>
        <dt>{t('tenant.updated')}</dt>
        <dd>{when(tn.updatedAt)}</dd>
      </dl>
    </section>
  )
}

/** The caller's own tenant's counts: GET /tenants/me/metrics answers for no other tenant. */
function Counts() {
  const metrics = useQuery({
    queryKey: ['metrics'],
    queryFn: () => tessera.GET('/api/v1/tenants/me/metrics'),
  })
  const m = metrics.data
  const facts: [Key, number | undefined][] = [
    ['screen.users', m?.users.total],
    ['tenant.activeUsers', m?.users.active],
    ['overview.activeSessions', m?.sessions.active],
    ['screen.roles', m?.roles],
    ['tenant.ownPermissions', m?.customPermissions],
    ['tenant.activeKeys', m?.clientKeys.active],
    ['overview.logins24h', m?.logins24h.successful],
  ]
  return (
    <section aria-labelledby="tenant-counts" className="panel">
      <h2 id="tenant-counts">{t('overview.counts')}</h2>
      <ErrorBox error={metrics.error} />
      <dl className="facts">
        {facts.map(([label, value]) => (
          <Fragment key={label}>
            <dt>{t(label)}</dt>
            <dd>{value === undefined ? '…' : num(value)}</dd>
          </Fragment>
        ))}
      </dl>
    </section>
  )
}

/**
 * One tenant, at /tenants/{id}: its details, its counts (one's own tenant only), and the edit and the
 * deletion its reader may make (lib/tenant-actions.ts). Platform admins reach any tenant's from the
 * Tenants list, anyone else its own from the Overview.
 */
export function TenantPage({ id }: { id: string }) {
  const session = useSession()
  const tenant = useQuery({
    queryKey: ['tenants', id],
    queryFn: () => tessera.GET('/api/v1/tenants/{id}', { params: { path: { id } } }),
  })
  const tn = tenant.data
  const own = tn !== undefined && tn.code === session.tenantCode
  const can = tenantActions(session.permissions, own)
  const platform = session.can('tenants:create')
  return (
    <>
      <p>
        {platform ? (
          <Link to="/tenants">← {t('screen.tenants')}</Link>
        ) : (
          <Link to="/">← {t('screen.overview')}</Link>
        )}
      </p>
      <h1>{tn ? t('tenant.title', { name: tn.name }) : t('screen.tenant')}</h1>
      <ErrorBox error={tenant.error} />
      {tenant.isPending && <Loading what={t('tenant.what')} />}
      {tn && own && (
        <p className="muted">
          {platform ? t('tenant.ownPlatform') : t('tenant.own')} {t('tenant.settingsAt')}{' '}
          <Link to="/settings">{t('screen.settings')}</Link>
          {t('tenant.settingsAfter')}
        </p>
      )}
      {tn && (
        <div className="grid">
          <Details t={tn} />
          {own && session.can('tenants:read') && <Counts />}
          {(can.rename || can.status) && <TenantEdit tenant={tn} withStatus={can.status} />}
          {can.remove && <TenantDelete tenant={tn} />}
        </div>
      )}
    </>
  )
}
