import { useState } from 'react'
import type { JsonSchema } from './lib/schema'

type Obj = Record<string, unknown>

// Why a few words by hand: the document's property names are camelCase identifiers; these read better.
const WORDS: Record<string, string> = {
  minLength: 'Minimum length',
  accessTokenExpiresIn: 'Access token lifetime (seconds)',
  refreshTokenExpiresIn: 'Refresh token lifetime (seconds)',
  mfa: 'Second factor',
  passwordPolicy: 'Password policy',
  webauthn: 'Passkeys',
  rpId: 'Domain the passkeys belong to (relying party id)',
  rpName: 'Name authenticators show',
  origins: 'Addresses of the pages that use passkeys (one per line)',
}

export function labelOf(key: string): string {
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase()
  return WORDS[key] ?? words.charAt(0).toUpperCase() + words.slice(1)
}

const idOf = (path: string) => `f${path.replace(/[^A-Za-z0-9]/g, '-')}`

interface FieldProps {
  name: string
  path: string
  schema: JsonSchema
  value: unknown
  errors: Map<string, string>
  onChange: (path: string, value: unknown) => void
}

function Hint({ path, schema, errors }: { path: string; schema: JsonSchema; errors: Map<string, string> }) {
  const error = errors.get(path)
  return (
    <>
      {schema.description && (
        <small id={`${idOf(path)}-hint`} className="muted">
          {schema.description}
        </small>
      )}
      {error && (
        <small id={`${idOf(path)}-error`} className="field-error">
          {labelOf(path.split('/').pop() ?? '')} {error}
        </small>
      )}
    </>
  )
}

/** A list of words or addresses, one per line; the blank lines are left out of the value. */
function Lines(props: {
  common: Record<string, unknown>
  value: unknown
  onChange: (lines: string[] | undefined) => void
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
        props.onChange(lines.length ? lines : undefined)
      }}
    />
  )
}

function Field({ name, path, schema, value, errors, onChange }: FieldProps) {
  const id = idOf(path)
  const described = [schema.description ? `${id}-hint` : '', errors.has(path) ? `${id}-error` : '']
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
        <legend>{labelOf(name)}</legend>
        <label className="check">
          <input
            {...common}
            type="checkbox"
            checked={on}
            onChange={(e) => onChange(path, e.target.checked ? {} : null)}
          />{' '}
          {labelOf(name)} on
        </label>
        <Hint path={path} schema={schema} errors={errors} />
        {on &&
          Object.entries(nullable.properties ?? {}).map(([key, sub]) => (
            <Field
              key={key}
              name={key}
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
        <legend>{labelOf(name)}</legend>
        {Object.entries(schema.properties).map(([key, sub]) => (
          <Field
            key={key}
            name={key}
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
          {labelOf(name)}
        </label>
        <Hint path={path} schema={schema} errors={errors} />
      </div>
    )
  }
  if (type === 'array' && schema.items?.enum) {
    const chosen = Array.isArray(value) ? value : []
    return (
      <fieldset>
        <legend>{labelOf(name)}</legend>
        {schema.items.enum.map((option) => (
          <label key={String(option)} className="check">
            <input
              type="checkbox"
              checked={chosen.includes(option)}
              onChange={(e) =>
                onChange(path, e.target.checked ? [...chosen, option] : chosen.filter((c) => c !== option))
              }
            />{' '}
            {String(option)}
          </label>
        ))}
        <Hint path={path} schema={schema} errors={errors} />
      </fieldset>
    )
  }
  let input
  if (type === 'array' && schema.items?.type === 'string') {
    input = <Lines common={common} value={value} onChange={(lines) => onChange(path, lines)} />
  } else if (schema.enum) {
    input = (
      <select {...common} value={String(value ?? '')} onChange={(e) => onChange(path, e.target.value)}>
        {schema.enum.map((o) => (
          <option key={String(o)}>{String(o)}</option>
        ))}
      </select>
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
        onChange={(e) => onChange(path, e.target.value || undefined)}
      />
    )
  }
  return (
    <div className="field">
      <label htmlFor={id}>{labelOf(name)}</label>
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
  errors: Map<string, string>
  onChange: (path: string, value: unknown) => void
}) {
  return (
    <>
      {Object.entries(props.schema.properties ?? {})
        .filter(([key]) => !props.skip?.includes(key))
        .map(([key, sub]) => (
          <Field
            key={key}
            name={key}
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
