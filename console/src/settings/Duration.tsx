import { useState, type ReactNode } from 'react'
import { UNITS, unitOf } from '../lib/durations'
import { t } from '../i18n'

/**
 * A length of time in seconds, shown in the largest of days, hours, minutes or seconds that fits it whole.
 * `hint` renders the help and the error under it, given the unit shown, so an error speaks in that unit.
 */
export function DurationField(props: {
  id: string
  common: Record<string, unknown>
  label: string
  seconds: number | undefined
  onChange: (seconds: number | undefined) => void
  hint: (unit: number) => ReactNode
}) {
  const [unit, setUnit] = useState<number>(props.seconds ? unitOf(props.seconds) : 60)
  const shown = props.seconds === undefined ? '' : String(Math.round((props.seconds / unit) * 1000) / 1000)
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <span className="row">
        <input
          {...props.common}
          type="number"
          min={0}
          step="any"
          value={shown}
          onChange={(e) =>
            props.onChange(e.target.value === '' ? undefined : Math.round(Number(e.target.value) * unit))
          }
        />
        <select
          aria-label={t('unit.label', { field: props.label })}
          value={unit}
          onChange={(e) => setUnit(Number(e.target.value))}
        >
          {UNITS.map((u) => (
            <option key={u.seconds} value={u.seconds}>
              {t(u.name)}
            </option>
          ))}
        </select>
      </span>
      {props.hint(unit)}
    </div>
  )
}
