import { Fragment } from 'react'
import { useQuery } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { tenantActions } from '../lib/tenant-actions'
import { Link } from '../router'
import { useSession } from '../session'
import { TenantDelete, TenantEdit } from '../tenants/TenantEdit'
import { ErrorBox, Loading } from '../ui/feedback'
import { when } from '../ui/format'

type Tenant = components['schemas']['Tenant']

function Details({ t }: { t: Tenant }) {
  return (
    <section aria-labelledby="tenant-details" className="panel">
      <h2 id="tenant-details">Details</h2>
      <dl className="facts">
        <dt>Name</dt>
        <dd>{t.name}</dd>
        <dt>Code</dt>
        <dd>
          <code>{t.code}</code>
        </dd>
        <dt>Status</dt>
        <dd>{t.status}</dd>
        <dt>Database</dt>
        <dd>
          {t.database.dedicated ? `Own: ${t.database.host ?? ''}/${t.database.database ?? ''}` : 'Shared'}
        </dd>
        <dt>Sign-in with</dt>
        <dd>{t.auth_config.loginIdentifiers.join(', ')}</dd>
        <dt>Created</dt>
        <dd>{when(t.createdAt)}</dd>
        <dt>Updated</dt>
        <dd>{when(t.updatedAt)}</dd>
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
  const facts: [string, number | undefined][] = [
    ['Users', m?.users.total],
    ['Active users', m?.users.active],
    ['Active sessions', m?.sessions.active],
    ['Roles', m?.roles],
    ['Permissions of its own', m?.customPermissions],
    ['Active Client Keys', m?.clientKeys.active],
    ['Logins in the last 24 h', m?.logins24h.successful],
  ]
  return (
    <section aria-labelledby="tenant-counts" className="panel">
      <h2 id="tenant-counts">Counts</h2>
      <ErrorBox error={metrics.error} />
      <dl className="facts">
        {facts.map(([label, value]) => (
          <Fragment key={label}>
            <dt>{label}</dt>
            <dd>{value ?? '…'}</dd>
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
  const t = tenant.data
  const own = t !== undefined && t.code === session.tenantCode
  const can = tenantActions(session.permissions, own)
  const platform = session.can('tenants:create')
  return (
    <>
      <p>{platform ? <Link to="/tenants">← Tenants</Link> : <Link to="/">← Overview</Link>}</p>
      <h1>{t ? `Tenant ${t.name}` : 'Tenant'}</h1>
      <ErrorBox error={tenant.error} />
      {tenant.isPending && <Loading what="the tenant" />}
      {t && own && (
        <p className="muted">
          {platform
            ? 'This is your own tenant, the platform: it cannot be deactivated or deleted. '
            : 'This is your own tenant. '}
          Its authentication settings are on the <Link to="/settings">Settings</Link> screen.
        </p>
      )}
      {t && (
        <div className="grid">
          <Details t={t} />
          {own && session.can('tenants:read') && <Counts />}
          {(can.rename || can.status) && <TenantEdit tenant={t} withStatus={can.status} />}
          {can.remove && <TenantDelete tenant={t} />}
        </div>
      )}
    </>
  )
}
