import type { components } from '@tessera/client'

type AuditStats = components['schemas']['AuditStats']

/** uPlot's columns: x in Unix seconds, then one series per line, aligned with x. */
export interface ChartColumns {
  x: number[]
  success: number[]
  failure: number[]
}

/** One step of a window: the bucket's width in seconds. */
const STEP = { hour: 3600, day: 86_400 } as const

/**
 * The successful and failed counts of one action per bucket, over the whole window the service counted
 * (`from` to `to`), every bucket present: the service answers no series for an action with no rows, and
 * a chart with missing buckets would join points across the gap.
 */
export function seriesOf(stats: AuditStats, action: string): ChartColumns {
  const step = STEP[stats.bucket]
  const from = Math.floor(Date.parse(stats.from) / 1000)
  const to = Math.floor(Date.parse(stats.to) / 1000)
  const counts = new Map<number, { success: number; failure: number }>()
  for (const point of stats.series.find((s) => s.action === action)?.buckets ?? []) {
    counts.set(Math.floor(Date.parse(point.start) / 1000), point)
  }
  const out: ChartColumns = { x: [], success: [], failure: [] }
  for (let t = from; t < to; t += step) {
    const c = counts.get(t)
    out.x.push(t)
    out.success.push(c?.success ?? 0)
    out.failure.push(c?.failure ?? 0)
  }
  return out
}

/** The sum of one outcome of an action over the window (e.g. identifiers locked: ACCOUNT_LOCKED). */
export function total(stats: AuditStats, action: string, outcome: 'success' | 'failure'): number {
  const series = stats.series.find((s) => s.action === action)
  return series ? series.buckets.reduce((n, b) => n + b[outcome], 0) : 0
}

/** The window ending now: `hours` back, as ISO timestamps for the stats' `from` and `to`. */
export function windowOf(hours: number, now = Date.now()): { from: string; to: string } {
  return { from: new Date(now - hours * 3_600_000).toISOString(), to: new Date(now).toISOString() }
}
