// Durations in the words a person reads (issue 44): Settings shows a length of time in days, hours, minutes or
// seconds, while the schema and the service speak in seconds ("must be >= 60"). These say the same bound in
// the field's unit, or, where that is not a whole number of it, in the largest unit that is.
import { t, type Key } from '../i18n/index.js'

/** The units a duration field offers, largest first: value in seconds, the catalogue's count of it and its name. */
export const UNITS: readonly { seconds: number; words: Key; name: Key }[] = [
  { seconds: 86_400, words: 'unit.days', name: 'unit.name.days' },
  { seconds: 3_600, words: 'unit.hours', name: 'unit.name.hours' },
  { seconds: 60, words: 'unit.minutes', name: 'unit.name.minutes' },
  { seconds: 1, words: 'unit.seconds', name: 'unit.name.seconds' },
]

/** The largest unit that holds `seconds` whole (seconds for 0 or a fraction). */
export function unitOf(seconds: number): number {
  return UNITS.find((u) => seconds >= u.seconds && seconds % u.seconds === 0)?.seconds ?? 1
}

/** "1 minute", "15 minutes", "1 day": `seconds` in `unit` when it is a whole number of it, else in the largest that is. */
export function durationWords(seconds: number, unit?: number): string {
  const whole = unit !== undefined && seconds > 0 && seconds % unit === 0 ? unit : unitOf(seconds)
  const u = UNITS.find((x) => x.seconds === whole) ?? { seconds: 1, words: 'unit.seconds' as const }
  return t(u.words, { count: seconds / u.seconds })
}

// The form's own words ("must be at least 60") and Ajv's, which the service sends ("must be >= 60").
const BOUND = /^must be (at least|at most|>=|<=|>|<) (\d+)$/
const SAYS: Record<string, Key> = {
  'at least': 'duration.atLeast',
  '>=': 'duration.atLeast',
  'at most': 'duration.atMost',
  '<=': 'duration.atMost',
  '>': 'duration.moreThan',
  '<': 'duration.lessThan',
}

/**
 * A bound on a duration said in time ("must be at least 1 minute"), in the field's `unit` where it fits;
 * any other message as it came.
 */
export function durationMessage(message: string, unit?: number): string {
  const bound = boundOf(message)
  return bound ? t(bound.says, { time: durationWords(bound.seconds, unit) }) : message
}

/** A bound in seconds from the service's words (English, Ajv's), or the form's own in the reader's language. */
function boundOf(message: string): { says: Key; seconds: number } | null {
  const m = BOUND.exec(message)
  if (m) return { says: SAYS[m[1] as string] ?? 'duration.atLeast', seconds: Number(m[2]) }
  for (const [form, says] of [
    ['schema.min', 'duration.atLeast'],
    ['schema.max', 'duration.atMost'],
  ] as const) {
    const [before = '', after = ''] = t(form, { n: '\u0000' }).split('\u0000')
    const n = message.startsWith(before) && message.endsWith(after) ? message.slice(before.length) : ''
    const digits = n.slice(0, n.length - after.length)
    if (/^\d+$/.test(digits)) return { says, seconds: Number(digits) }
  }
  return null
}
