const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const

// Why the digit cap: 6 digits of days is ~2,700 years, far past any audit retention, and keeps the
// product a safe integer without a separate overflow check.
const SINCE_RE = /^([1-9][0-9]{0,5})([mhd])$/

/**
 * Parses a relative window such as `30m`, `24h` or `7d` into milliseconds. Only a positive integer
 * followed by `m`, `h` or `d` is accepted (no zero, sign, decimals, spaces or other units): null otherwise.
 */
export function parseSince(s: string): number | null {
  const m = SINCE_RE.exec(s)
  if (m === null) return null
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]
}
