// Durations in the words a person reads (issue 44): Settings shows a length of time in days, hours, minutes or
// seconds, while the schema and the service speak in seconds ("must be >= 60"). These say the same bound in
// the field's unit, or, where that is not a whole number of it, in the largest unit that is.
import { count } from './plural.js'

/** The units a duration field offers, largest first: value in seconds, and the words for one and many. */
export const UNITS = [
  { seconds: 86_400, one: 'day', other: 'days' },
  { seconds: 3_600, one: 'hour', other: 'hours' },
  { seconds: 60, one: 'minute', other: 'minutes' },
  { seconds: 1, one: 'second', other: 'seconds' },
] as const

/** The largest unit that holds `seconds` whole (seconds for 0 or a fraction). */
export function unitOf(seconds: number): number {
  return UNITS.find((u) => seconds >= u.seconds && seconds % u.seconds === 0)?.seconds ?? 1
}

/** "1 minute", "15 minutes", "1 day": `seconds` in `unit` when it is a whole number of it, else in the largest that is. */
export function durationWords(seconds: number, unit?: number): string {
  const whole = unit !== undefined && seconds > 0 && seconds % unit === 0 ? unit : unitOf(seconds)
  const u = UNITS.find((x) => x.seconds === whole) ?? UNITS[3]
  return count(seconds / u.seconds, u.one, u.other)
}

// The form's own words ("must be at least 60") and Ajv's, which the service sends ("must be >= 60").
const BOUND = /^must be (at least|at most|>=|<=|>|<) (\d+)$/
const SAYS: Record<string, string> = {
  'at least': 'at least',
  '>=': 'at least',
  'at most': 'at most',
  '<=': 'at most',
  '>': 'more than',
  '<': 'less than',
}

/**
 * A bound on a duration said in time ("must be at least 1 minute"), in the field's `unit` where it fits;
 * any other message as it came.
 */
export function durationMessage(message: string, unit?: number): string {
  const m = BOUND.exec(message)
  if (!m) return message
  return `must be ${SAYS[m[1] as string]} ${durationWords(Number(m[2]), unit)}`
}
