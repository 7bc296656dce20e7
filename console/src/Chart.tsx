import { useEffect, useRef } from 'react'
import uPlot from 'uplot'
import type { ChartColumns } from './lib/chart-data'
import { t } from './i18n'
import { locale } from './ui/i18n'

/**
 * Successful and failed logins as two lines (uPlot: canvas, ~20 KB gzip). The same numbers are in a
 * table under the chart, for screen readers and for reading exact values. `what` and `names` let a
 * Client Key's page draw the key's answered and refused requests with the same chart.
 */
export function LoginChart({
  title,
  data,
  unit,
  what = t('chart.logins'),
  names = [t('chart.successful'), t('chart.failed')],
}: {
  title: string
  data: ChartColumns
  unit: 'hour' | 'day'
  what?: string
  names?: readonly [string, string]
}) {
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const el = box.current
    if (!el) return
    const width = () => Math.max(260, el.clientWidth)
    // Why read from the stylesheet: the colours follow its light or dark scheme (styles.css).
    const style = getComputedStyle(el)
    const color = (name: string) => style.getPropertyValue(name).trim()
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        axes: [{ stroke: color('--muted') }, { stroke: color('--muted') }],
        scales: { y: { range: (_u, _min, max) => [0, Math.max(4, max)] } },
        series: [
          {},
          { label: names[0], stroke: color('--chart-success'), width: 2 },
          { label: names[1], stroke: color('--chart-failure'), width: 2, dash: [6, 3] },
        ],
      },
      [data.x, data.success, data.failure],
      el,
    )
    const resize = new ResizeObserver(() => plot.setSize({ width: width(), height: 220 }))
    resize.observe(el)
    return () => {
      resize.disconnect()
      plot.destroy()
    }
    // Why only `data`: `names` is a fresh array literal on each render and would redraw the chart each time.
  }, [data])
  const label = (at: number) =>
    unit === 'hour'
      ? new Date(at * 1000).toLocaleTimeString(locale(), { hour: '2-digit', minute: '2-digit' })
      : new Date(at * 1000).toLocaleDateString(locale())
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <div
        ref={box}
        role="img"
        aria-label={t('chart.label', {
          title,
          first: names[0].toLowerCase(),
          second: names[1].toLowerCase(),
          what,
        })}
      />
      <details>
        <summary>{t('chart.data', { title })}</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">{unit === 'hour' ? t('chart.hour') : t('chart.day')}</th>
              <th scope="col">{names[0]}</th>
              <th scope="col">{names[1]}</th>
            </tr>
          </thead>
          <tbody>
            {data.x.map((at, i) => (
              <tr key={at}>
                <td>{label(at)}</td>
                <td>{data.success[i]}</td>
                <td>{data.failure[i]}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  )
}
