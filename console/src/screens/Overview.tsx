import { useQuery } from '@tanstack/react-query'
import { tessera } from '../api'
import { LoginChart } from '../Chart'
import { seriesOf, total, windowOf } from '../lib/chart-data'
import { Link } from '../router'
import { useSession } from '../session'
import { ErrorBox, Loading } from '../ui/feedback'
import { when } from '../ui/format'
import { List } from '../ui/List'

function Stat({ label, value }: { label: string; value: number | undefined }) {
  return (
    <div className="stat">
      <dt>{label}</dt>
      <dd>{value ?? '…'}</dd>
    </div>
  )
}

/** For the platform's admins: until a tenant other than the platform exists, the way to make one. */
function FirstTenant() {
  const tenants = useQuery({
    queryKey: ['tenants', 'count'],
    queryFn: () => tessera.GET('/api/v1/tenants', { params: { query: { limit: 1 } } }),
  })
  if (!tenants.data || tenants.data.total > 1) return null
  return (
    <section className="callout" aria-labelledby="first-tenant">
      <h2 id="first-tenant">Create your first tenant</h2>
      <p>
        Only the platform tenant exists. A tenant is an organisation with its own users, roles and keys;
        create one with its first administrator, who can then sign in here.
      </p>
      <Link to="/tenants?create=1" className="button primary">
        Create the first tenant
      </Link>
    </section>
  )
}

/** The way to one's own tenant's page (details, counts, its name's edit), for whoever may read it. */
function OwnTenant() {
  const tenant = useQuery({ queryKey: ['tenant', 'me'], queryFn: () => tessera.GET('/api/v1/tenants/me') })
  if (!tenant.data) return null
  return (
    <p>
      Your tenant: <Link to={`/tenants/${tenant.data.id}`}>{tenant.data.name}</Link>{' '}
      <span className="muted">
        (<code>{tenant.data.code}</code>, {tenant.data.status})
      </span>
    </p>
  )
}

export function Overview() {
  const session = useSession()
  const canMetrics = session.can('tenants:read')
  const canLogs = session.can('auth:logs')
  const metrics = useQuery({
    queryKey: ['metrics'],
    queryFn: () => tessera.GET('/api/v1/tenants/me/metrics'),
    enabled: canMetrics,
  })
  const security = useQuery({
    queryKey: ['metrics', 'security'],
    queryFn: () => tessera.GET('/api/v1/tenants/me/metrics/security'),
    enabled: canMetrics,
  })
  const hourly = useQuery({
    queryKey: ['stats', 'hour'],
    queryFn: () =>
      tessera.GET('/api/v1/auth-logs/stats', { params: { query: { bucket: 'hour', ...windowOf(24) } } }),
    enabled: canLogs,
  })
  const daily = useQuery({
    queryKey: ['stats', 'day'],
    queryFn: () =>
      tessera.GET('/api/v1/auth-logs/stats', { params: { query: { bucket: 'day', ...windowOf(24 * 30) } } }),
    enabled: canLogs,
  })
  return (
    <>
      <h1>Overview</h1>
      {canMetrics && <OwnTenant />}
      {session.can('tenants:create') && <FirstTenant />}
      {canMetrics && (
        <section aria-labelledby="counts">
          <h2 id="counts">Counts</h2>
          <ErrorBox error={metrics.error} />
          <dl className="stats">
            <Stat label="Users" value={metrics.data?.users.total} />
            <Stat label="Active sessions" value={metrics.data?.sessions.active} />
            <Stat label="Logins in the last 24 h" value={metrics.data?.logins24h.successful} />
            <Stat label="Failed logins in the last 24 h" value={metrics.data?.logins24h.failed} />
            <Stat
              label="Identifiers locked in the last 24 h"
              value={hourly.data && total(hourly.data, 'ACCOUNT_LOCKED', 'success')}
            />
          </dl>
        </section>
      )}
      {canLogs && (
        <section aria-labelledby="logins">
          <h2 id="logins">Logins</h2>
          <ErrorBox error={hourly.error ?? daily.error} />
          <div className="charts">
            {hourly.data ? (
              <LoginChart
                title="Logins per hour, last 24 hours"
                unit="hour"
                data={seriesOf(hourly.data, 'LOGIN')}
              />
            ) : (
              hourly.isPending && <Loading what="the hourly chart" />
            )}
            {daily.data ? (
              <LoginChart
                title="Logins per day, last 30 days"
                unit="day"
                data={seriesOf(daily.data, 'LOGIN')}
              />
            ) : (
              daily.isPending && <Loading what="the daily chart" />
            )}
          </div>
        </section>
      )}
      {canMetrics && (
        <section aria-labelledby="failing">
          <h2 id="failing">Top failing addresses</h2>
          <List
            what="addresses"
            error={security.error}
            pending={security.isPending}
            items={security.data?.ipAnalysis.topOffenders ?? []}
            empty="No failed login in the last 24 hours."
            scroll={false}
            rowKey={(o) => o.ip}
            columns={[
              { title: 'Address', cell: (o) => o.ip },
              { title: 'Failed logins (24 h)', cell: (o) => o.failures },
              { title: 'Last attempt', cell: (o) => when(o.lastAttemptAt) },
            ]}
          />
        </section>
      )}
      {!canMetrics && !canLogs && (
        <p>Your role shows no figures here. Use the menu to reach what you may manage.</p>
      )}
    </>
  )
}
