import { useState } from 'react'
import type { JsonSchema } from './lib/schema'
import { durationMessage } from './lib/durations'
import { DurationField } from './settings/Duration'
import { helpWords, isDuration, labelWords, optionWords } from './settings/words'
import { BRAND_INPUTS } from './settings/BrandingInputs'
import { t } from './i18n'

type Obj = Record<string, unknown>

// Why a few words by hand: the document's property names are camelCase identifiers; these read better.
const WORDS: Record<string, string> = {
  minLength: 'Minimum length',
  accessTokenExpiresIn: 'Access token lifetime (seconds)',
  refreshTokenExpiresIn: 'Refresh token lifetime (seconds)',
  mfa: 'Second factor',
  passwordPolicy: 'Password policy',
}

function labelOf(key: string): string {
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase()
  return WORDS[key] ?? words.charAt(0).toUpperCase() + words.slice(1)
}

/** A field's label: the settings' own words for its path (settings/words.ts), else its name in words. */
export function labelAt(path: string): string {
  return labelWords(path) ?? labelOf(path.split('/').pop() ?? '')
}

const optionOf = (value: unknown) => optionWords(String(value))

const idOf = (path: string) => `f${path.replace(/[^A-Za-z0-9]/g, '-')}`

interface FieldProps {
  path: string
  schema: JsonSchema
  value: unknown
  errors: Map<string, string>
  onChange: (path: string, value: unknown) => void
}

/** The help under a field: the settings' own words; the document's only for a field they do not name. */
const helpOf = (path: string, schema: JsonSchema) =>
  helpWords(path) ?? (labelWords(path) ? undefined : schema.description)

function Hint(props: { path: string; schema: JsonSchema; errors: Map<string, string>; unit?: number }) {
  const { path, schema, errors } = props
  const raw = errors.get(path)
  // Why here: the form's check and the service both speak in seconds; the field may show minutes or days.
  const error = raw !== undefined && isDuration(path) ? durationMessage(raw, props.unit) : raw
  const help = helpOf(path, schema)
  return (
    <>
      {help && (
        <small id={`${idOf(path)}-hint`} className="muted">
          {help}
        </small>
      )}
      {error && (
        <small id={`${idOf(path)}-error`} className="field-error">
          {labelAt(path)} {error}
        </small>
      )}
    </>
  )
}

/** A list of words or addresses, one per line; the blank lines are left out of the value. */
function Lines(props: {
  common: Record<string, unknown>
  value: unknown
  onChange: (lines: string[]) => void
}) {
  const [text, setText] = useState(Array.isArray(props.value) ? props.value.join('\n') : '')
  return (
    <textarea
      {...props.common}
      rows={3}
      value={text}
      onChange={(e) => {
        setText(e.target.value)
        const lines = e.target.value
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean)
        // Why [] and not nothing: an emptied list must be sent, to clear what is stored.
        props.onChange(lines)
      }}
    />
  )
}

function Field({ path, schema, value, errors, onChange }: FieldProps) {
  const id = idOf(path)
  const described = [helpOf(path, schema) ? `${id}-hint` : '', errors.has(path) ? `${id}-error` : '']
    .filter(Boolean)
    .join(' ')
  const common = {
    id,
    'aria-describedby': described || undefined,
    'aria-invalid': errors.has(path) || undefined,
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  // An object that may be null (passkeys): off is null; on shows its fields, to be filled before saving.
  const nullable = schema.anyOf?.find((s) => s.type === 'object' && s.properties)
  if (nullable && schema.anyOf?.some((s) => s.type === 'null')) {
    const on = value !== null && value !== undefined
    return (
      <fieldset>
        <legend>{labelAt(path)}</legend>
        <label className="check">
          <input
            {...common}
            type="checkbox"
            checked={on}
            onChange={(e) => onChange(path, e.target.checked ? {} : null)}
          />{' '}
          {t('form.switchOn', { label: labelAt(path) })}
        </label>
        <Hint path={path} schema={schema} errors={errors} />
        {on &&
          Object.entries(nullable.properties ?? {}).map(([key, sub]) => (
            <Field
              key={key}
              path={`${path}/${key}`}
              schema={sub}
              value={(value as Obj)[key]}
              errors={errors}
              onChange={onChange}
            />
          ))}
      </fieldset>
    )
  }
  if (type === 'object' && schema.properties) {
    return (
      <fieldset>
        <legend>{labelAt(path)}</legend>
        {Object.entries(schema.properties).map(([key, sub]) => (
          <Field
            key={key}
            path={`${path}/${key}`}
            schema={sub}
            value={(value as Obj | undefined)?.[key]}
            errors={errors}
            onChange={onChange}
          />
        ))}
      </fieldset>
    )
  }
  if (type === 'boolean') {
    return (
      <div className="field">
        <label className="check">
          <input
            {...common}
            type="checkbox"
            checked={value === true}
            onChange={(e) => onChange(path, e.target.checked)}
          />{' '}
          {labelAt(path)}
        </label>
        <Hint path={path} schema={schema} errors={errors} />
      </div>
    )
  }
  if (type === 'array' && schema.items?.enum) {
    const chosen = Array.isArray(value) ? value : []
    return (
      <fieldset>
        <legend>{labelAt(path)}</legend>
        {schema.items.enum.map((option) => (
          <label key={String(option)} className="check">
            <input
              type="checkbox"
              checked={chosen.includes(option)}
              onChange={(e) =>
                onChange(path, e.target.checked ? [...chosen, option] : chosen.filter((c) => c !== option))
              }
            />{' '}
            {optionOf(option)}
          </label>
        ))}
        <Hint path={path} schema={schema} errors={errors} />
      </fieldset>
    )
  }
  let input
  const orNull = schema.anyOf?.some((s) => s.type === 'null') ?? false
  if (type === 'array' && schema.items?.type === 'object') {
    // A list of objects (an OAuth config's resources): no form for it here; the API sets it.
    return (
      <div className="field">
        <span>{labelAt(path)}</span>
        <small className="muted">
          {t('form.viaApi', {
            set:
              Array.isArray(value) && value.length ? t('form.set', { count: value.length }) : t('form.none'),
          })}
        </small>
      </div>
    )
  }
  const Special = BRAND_INPUTS[path]
  if (Special) {
    input = (
      <Special common={common} label={labelAt(path)} value={value} onChange={(v) => onChange(path, v)} />
    )
  } else if (type === 'array' && schema.items?.type === 'string') {
    input = <Lines common={common} value={value} onChange={(lines) => onChange(path, lines)} />
  } else if (schema.enum) {
    input = (
      <select {...common} value={String(value ?? '')} onChange={(e) => onChange(path, e.target.value)}>
        {schema.enum.map((o) => (
          <option key={String(o)} value={String(o)}>
            {optionOf(o)}
          </option>
        ))}
      </select>
    )
  } else if (type === 'integer' && isDuration(path)) {
    return (
      <DurationField
        id={id}
        common={common}
        label={labelAt(path)}
        seconds={typeof value === 'number' ? value : undefined}
        onChange={(v) => onChange(path, v)}
        hint={(unit) => <Hint path={path} schema={schema} errors={errors} unit={unit} />}
      />
    )
  } else if (type === 'integer' || type === 'number') {
    input = (
      <input
        {...common}
        type="number"
        min={schema.minimum}
        max={schema.maximum}
        value={value === undefined || value === null ? '' : String(value)}
        onChange={(e) => onChange(path, e.target.value === '' ? undefined : Number(e.target.value))}
      />
    )
  } else {
    input = (
      <input
        {...common}
        value={String(value ?? '')}
        // Why null for an emptied field that may be null (a mail link's page): null is what clears it.
        onChange={(e) => onChange(path, e.target.value || (orNull ? null : undefined))}
      />
    )
  }
  return (
    <div className="field">
      <label htmlFor={id}>{labelAt(path)}</label>
      {input}
      <Hint path={path} schema={schema} errors={errors} />
    </div>
  )
}

/** A form for an object schema: one field per property, nested objects as fieldsets. */
export function SchemaFields(props: {
  schema: JsonSchema
  value: Obj
  skip?: string[]
  /** Only these top-level fields, in this order. */
  only?: string[]
  errors: Map<string, string>
  onChange: (path: string, value: unknown) => void
}) {
  const properties = props.schema.properties ?? {}
  const keys = props.only ? props.only.filter((k) => k in properties) : Object.keys(properties)
  return (
    <>
      {keys
        .map((key) => [key, properties[key] as JsonSchema] as const)
        .filter(([key]) => !props.skip?.includes(key))
        .map(([key, sub]) => (
          <Field
            key={key}
            path={`/${key}`}
            schema={sub}
            value={props.value[key]}
            errors={props.errors}
            onChange={props.onChange}
          />
        ))}
    </>
  )
}

/** A copy of `obj` with the value at a JSON pointer replaced (objects on the way created). */
export function setAt(obj: Obj, path: string, value: unknown): Obj {
  const [head, ...rest] = path.split('/').filter(Boolean)
  if (head === undefined) return obj
  const next = { ...obj }
  if (rest.length === 0) {
    if (value === undefined) delete next[head]
    else next[head] = value
  } else next[head] = setAt((obj[head] as Obj | undefined) ?? {}, `/${rest.join('/')}`, value)
  return next
}
