import { useQuery } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { LoginChart } from '../Chart'
import { num } from '../ui/i18n'
import { coversWindow, requestsPerHour } from '../lib/key-usage'
import { ErrorBox, Loading } from '../ui/feedback'
import { when } from '../ui/format'
import { List, usePage } from '../ui/List'
import { t } from '../i18n'

type ClientKeyLog = components['schemas']['ClientKeyLog']

const DAY = 86_400_000
/** The log's largest page. */
const PAGE = 500
/** At most this many pages for the chart: a key busier than 5,000 requests a day is charted in part. */
const MAX_PAGES = 10
const LOG_LIMIT = 20

/** The key's log rows of the last 24 h, newest first, read page by page until the window is covered. */
async function lastDay(id: string): Promise<{ rows: ClientKeyLog[]; partial: boolean }> {
  const since = Date.now() - DAY
  const rows: ClientKeyLog[] = []
  for (let page = 0; page < MAX_PAGES; page++) {
    const got = await tessera.GET('/api/v1/client-keys/{id}/logs', {
      params: { path: { id }, query: { limit: PAGE, offset: page * PAGE } },
    })
    rows.push(...got.items)
    if (got.items.length === 0 || coversWindow(rows, got.total, since)) return { rows, partial: false }
  }
  return { rows, partial: true }
}

/** Counts from /stats and the requests per hour over 24 h from the log. */
export function KeyUsage({ id }: { id: string }) {
  const stats = useQuery({
    queryKey: ['keys', id, 'stats'],
    queryFn: () => tessera.GET('/api/v1/client-keys/{id}/stats', { params: { path: { id } } }),
  })
  const day = useQuery({ queryKey: ['keys', id, 'day'], queryFn: () => lastDay(id) })
  const s = stats.data
  return (
    <section aria-labelledby="usage" className="panel wide">
      <h2 id="usage">{t('usage.title')}</h2>
      <ErrorBox error={stats.error ?? day.error} />
      {s && (
        <dl className="stats">
          <div className="stat">
            <dt>{t('usage.all')}</dt>
            <dd>{num(s.totalRequests)}</dd>
          </div>
          <div className="stat">
            <dt>{t('usage.last24')}</dt>
            <dd>{num(s.last24h)}</dd>
          </div>
          <div className="stat">
            <dt>{t('usage.byStatus')}</dt>
            <dd>
              {s.byStatus['2xx']} / {s.byStatus['4xx']} / {s.byStatus['5xx']}
            </dd>
          </div>
        </dl>
      )}
      {day.isPending ? (
        <Loading what={t('usage.chartWhat')} />
      ) : (
        day.data && (
          <>
            <LoginChart
              title={t('usage.perHour')}
              data={requestsPerHour(day.data.rows)}
              unit="hour"
              what={t('usage.requests')}
              names={[t('usage.answered'), t('usage.refused')]}
            />
            {day.data.partial && <p className="muted">{t('usage.partial', { count: PAGE * MAX_PAGES })}</p>}
          </>
        )
      )}
      {s && s.topRoutes.length > 0 && (
        <>
          <h3>{t('usage.routes')}</h3>
          <ul>
            {s.topRoutes.map((r) => (
              <li key={r.route}>
                <span className="mono">{r.route}</span>: {r.count}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  )
}

/** The key's request log, newest first, in pages. */
export function KeyLog({ id }: { id: string }) {
  const page = usePage(LOG_LIMIT)
  const logs = useQuery({
    queryKey: ['keys', id, 'logs', page.offset],
    queryFn: () =>
      tessera.GET('/api/v1/client-keys/{id}/logs', {
        params: { path: { id }, query: { limit: page.limit, offset: page.offset } },
      }),
  })
  return (
    <section aria-labelledby="request-log" className="panel wide">
      <h2 id="request-log">{t('usage.log')}</h2>
      <List
        what={t('usage.logWhat')}
        error={logs.error}
        pending={logs.isPending}
        items={logs.data?.items}
        empty={t('usage.none')}
        page={page}
        total={logs.data?.total}
        region={t('usage.region')}
        rowKey={(r) => r.id}
        columns={[
          { title: t('audit.time'), cell: (r) => when(r.createdAt) },
          { title: t('usage.request'), cell: (r) => `${r.method} ${r.route}`, className: 'mono' },
          { title: t('users.status'), cell: (r) => r.statusCode },
          { title: t('overview.address'), cell: (r) => r.ip },
          { title: t('usage.origin'), cell: (r) => r.origin ?? '—' },
          { title: t('audit.requestId'), cell: (r) => r.requestId ?? '—', className: 'mono' },
        ]}
      />
    </section>
  )
}
