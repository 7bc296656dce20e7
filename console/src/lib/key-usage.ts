import type { components } from '@tessera/client'
import type { ChartColumns } from './chart-data.js'

type ClientKeyLog = components['schemas']['ClientKeyLog']

const HOUR = 3_600_000

/**
 * Requests of a Client Key per hour over the `hours` before `now`, from its request log (the API has no
 * bucketed count for keys, and the console adds no endpoint): answered (status below 400) as `success`,
 * refused or failed (400 and above) as `failure`. Buckets are whole clock hours, the last one the hour
 * `now` is in, every one present with zeros where the log has none; rows outside the window are ignored.
 */
export function requestsPerHour(logs: readonly ClientKeyLog[], now = Date.now(), hours = 24): ChartColumns {
  const last = Math.floor(now / HOUR) * HOUR
  const first = last - (hours - 1) * HOUR
  const out: ChartColumns = { x: [], success: [], failure: [] }
  for (let t = first; t <= last; t += HOUR) {
    out.x.push(t / 1000)
    out.success.push(0)
    out.failure.push(0)
  }
  for (const row of logs) {
    const at = Date.parse(row.createdAt)
    if (!(at >= first && at < last + HOUR)) continue
    const i = Math.floor((at - first) / HOUR)
    if (row.statusCode < 400) out.success[i] = (out.success[i] ?? 0) + 1
    else out.failure[i] = (out.failure[i] ?? 0) + 1
  }
  return out
}

/**
 * Whether the log pages read so far reach back past `since` (or hold every row): the log is newest first,
 * so once its oldest row read is older than the window there is nothing more to count.
 */
export function coversWindow(read: readonly ClientKeyLog[], total: number, since: number): boolean {
  const oldest = read.at(-1)
  return read.length >= total || (oldest !== undefined && Date.parse(oldest.createdAt) < since)
}

/**
 * An allowlist typed in a text box: one entry a line (commas and spaces also separate), trimmed, empty
 * entries and repeats dropped. The service checks each entry's form (CIDR, origin) and names a bad one.
 */
export function parseList(text: string): string[] {
  return [
    ...new Set(
      text
        .split(/[\s,]+/)
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ]
}
