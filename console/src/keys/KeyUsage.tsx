import { useState } from 'react'
import { useQuery } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { LoginChart } from '../Chart'
import { coversWindow, requestsPerHour } from '../lib/key-usage'
import { Empty, ErrorBox, Loading, Pager, when } from '../ui'

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
  const [offset, setOffset] = useState(0)
  const logs = useQuery({
    queryKey: ['keys', id, 'logs', offset],
    queryFn: () =>
      tessera.GET('/api/v1/client-keys/{id}/logs', {
        params: { path: { id }, query: { limit: LOG_LIMIT, offset } },
      }),
  })
  return (
    <section aria-labelledby="request-log" className="panel wide">
      <h2 id="request-log">Request log</h2>
      <ErrorBox error={logs.error} />
      {logs.isPending ? (
        <Loading what="the request log" />
      ) : logs.data && logs.data.items.length === 0 ? (
        <Empty>No request made with this key yet.</Empty>
      ) : (
        logs.data && (
          <>
            {/* Why focusable: the table is wider than its panel, and a keyboard user must be able to scroll it. */}
            <div className="scroll" tabIndex={0} role="region" aria-label="Request log, scrollable">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Request</th>
                    <th scope="col">Status</th>
                    <th scope="col">Address</th>
                    <th scope="col">Origin</th>
                    <th scope="col">Request id</th>
                  </tr>
                </thead>
                <tbody>
                  {logs.data.items.map((r) => (
                    <tr key={r.id}>
                      <td>{when(r.createdAt)}</td>
                      <td className="mono">
                        {r.method} {r.route}
                      </td>
                      <td>{r.statusCode}</td>
                      <td>{r.ip}</td>
                      <td>{r.origin ?? '—'}</td>
                      <td className="mono">{r.requestId ?? '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager total={logs.data.total} limit={LOG_LIMIT} offset={offset} onOffset={setOffset} />
          </>
        )
      )}
    </section>
  )
}
