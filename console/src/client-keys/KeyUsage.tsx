import { useQuery } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { LoginChart } from '../Chart'
import { coversWindow, requestsPerHour } from '../lib/key-usage'
import { ErrorBox, Loading } from '../ui/feedback'
import { when } from '../ui/format'
import { List, usePage } from '../ui/List'

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
      <h2 id="usage">Usage</h2>
      <ErrorBox error={stats.error ?? day.error} />
      {s && (
        <dl className="stats">
          <div className="stat">
            <dt>Requests, all time</dt>
            <dd>{s.totalRequests}</dd>
          </div>
          <div className="stat">
            <dt>Requests, last 24 h</dt>
            <dd>{s.last24h}</dd>
          </div>
          <div className="stat">
            <dt>Answered 2xx / 4xx / 5xx</dt>
            <dd>
              {s.byStatus['2xx']} / {s.byStatus['4xx']} / {s.byStatus['5xx']}
            </dd>
          </div>
        </dl>
      )}
      {day.isPending ? (
        <Loading what="the usage chart" />
      ) : (
        day.data && (
          <>
            <LoginChart
              title="Requests per hour, last 24 hours"
              data={requestsPerHour(day.data.rows)}
              unit="hour"
              what="requests"
              names={['Answered', 'Refused or failed']}
            />
            {day.data.partial && (
              <p className="muted">Only the latest {PAGE * MAX_PAGES} requests are charted.</p>
            )}
          </>
        )
      )}
      {s && s.topRoutes.length > 0 && (
        <>
          <h3>Most used routes</h3>
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
      <h2 id="request-log">Request log</h2>
      <List
        what="the request log"
        error={logs.error}
        pending={logs.isPending}
        items={logs.data?.items}
        empty="No request made with this key yet."
        page={page}
        total={logs.data?.total}
        region="Request log, scrollable"
        rowKey={(r) => r.id}
        columns={[
          { title: 'Time', cell: (r) => when(r.createdAt) },
          { title: 'Request', cell: (r) => `${r.method} ${r.route}`, className: 'mono' },
          { title: 'Status', cell: (r) => r.statusCode },
          { title: 'Address', cell: (r) => r.ip },
          { title: 'Origin', cell: (r) => r.origin ?? '—' },
          { title: 'Request id', cell: (r) => r.requestId ?? '—', className: 'mono' },
        ]}
      />
    </section>
  )
}
