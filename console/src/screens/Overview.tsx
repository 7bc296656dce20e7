import { useQuery } from '@tanstack/react-query'
import { tessera } from '../api'
import { LoginChart } from '../Chart'
import { seriesOf, total, windowOf } from '../lib/chart-data'
import { Link } from '../router'
import { useSession } from '../session'
import { ErrorBox, Loading } from '../ui/feedback'
import { when } from '../ui/format'
import { List } from '../ui/List'
import { t } from '../i18n'
import { num } from '../ui/i18n'

function Stat({ label, value }: { label: string; value: number | undefined }) {
  return (
    <div className="stat">
      <dt>{label}</dt>
      <dd>{value === undefined ? '…' : num(value)}</dd>
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
      <h2 id="first-tenant">{t('overview.firstTenant')}</h2>
      <p>{t('overview.firstTenantHelp')}</p>
      <Link to="/tenants?create=1" className="button primary">
        {t('overview.createFirstTenant')}
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
      {t('overview.yourTenant')} <Link to={`/tenants/${tenant.data.id}`}>{tenant.data.name}</Link>{' '}
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
      <h1>{t('screen.overview')}</h1>
      {canMetrics && <OwnTenant />}
      {session.can('tenants:create') && <FirstTenant />}
      {canMetrics && (
        <section aria-labelledby="counts">
          <h2 id="counts">{t('overview.counts')}</h2>
          <ErrorBox error={metrics.error} />
          <dl className="stats">
            <Stat label={t('screen.users')} value={metrics.data?.users.total} />
            <Stat label={t('overview.activeSessions')} value={metrics.data?.sessions.active} />
            <Stat label={t('overview.logins24h')} value={metrics.data?.logins24h.successful} />
            <Stat label={t('overview.failed24h')} value={metrics.data?.logins24h.failed} />
            <Stat
              label={t('overview.locked24h')}
              value={hourly.data && total(hourly.data, 'ACCOUNT_LOCKED', 'success')}
            />
          </dl>
        </section>
      )}
      {canLogs && (
        <section aria-labelledby="logins">
          <h2 id="logins">{t('overview.logins')}</h2>
          <ErrorBox error={hourly.error ?? daily.error} />
          <div className="charts">
            {hourly.data ? (
              <LoginChart title={t('overview.perHour')} unit="hour" data={seriesOf(hourly.data, 'LOGIN')} />
            ) : (
              hourly.isPending && <Loading what={t('overview.hourlyChart')} />
            )}
            {daily.data ? (
              <LoginChart title={t('overview.perDay')} unit="day" data={seriesOf(daily.data, 'LOGIN')} />
            ) : (
              daily.isPending && <Loading what={t('overview.dailyChart')} />
            )}
          </div>
        </section>
      )}
      {canMetrics && (
        <section aria-labelledby="failing">
          <h2 id="failing">{t('overview.failing')}</h2>
          <List
            what={t('overview.addresses')}
            error={security.error}
            pending={security.isPending}
            items={security.data?.ipAnalysis.topOffenders ?? []}
            empty={t('overview.noFailed')}
            scroll={false}
            rowKey={(o) => o.ip}
            columns={[
              { title: t('overview.address'), cell: (o) => o.ip },
              { title: t('overview.failures'), cell: (o) => o.failures },
              { title: t('overview.lastAttempt'), cell: (o) => when(o.lastAttemptAt) },
            ]}
          />
        </section>
      )}
      {!canMetrics && !canLogs && <p>{t('overview.noFigures')}</p>}
    </>
  )
}
