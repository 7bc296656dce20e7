import { t } from '../i18n/index.js'

/** The part of JSON Schema (2020-12) that the document's request schemas use. */
export interface JsonSchema {
  type?: string | string[]
  enum?: unknown[]
  const?: unknown
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  items?: JsonSchema
  minItems?: number
  maxItems?: number
  uniqueItems?: boolean
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: boolean | JsonSchema
  minProperties?: number
  anyOf?: JsonSchema[]
  format?: string
  description?: string
}

export interface Issue {
  /** JSON pointer of the value, `/passwordPolicy/minLength`. */
  path: string
  message: string
}

function typeOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

function typeMatches(wanted: string, actual: string): boolean {
  return wanted === actual || (wanted === 'number' && actual === 'integer')
}

/**
 * Checks a value against a schema, as the service's validator would, and says what is wrong in words a
 * form can show next to its field. Why not Ajv: it compiles schemas with `new Function`, which the
 * console's Content-Security-Policy (no unsafe-eval) forbids, and it would triple the bundle.
 */
export function validate(schema: JsonSchema, value: unknown, path = ''): Issue[] {
  const issues: Issue[] = []
  const add = (message: string, at = path) => issues.push({ path: at, message })
  const actual = typeOf(value)
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type]
    if (!types.some((ty) => typeMatches(ty, actual))) {
      add(
        t('schema.type', {
          types: types.map((ty) => (ty === 'integer' ? t('schema.integer') : ty)).join(t('schema.or')),
        }),
      )
      return issues
    }
  }
  if (schema.const !== undefined && value !== schema.const)
    add(t('schema.const', { value: JSON.stringify(schema.const) }))
  if (schema.enum && !schema.enum.includes(value)) add(t('schema.enum', { values: schema.enum.join(', ') }))
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum)
      add(t('schema.min', { n: String(schema.minimum) }))
    if (schema.maximum !== undefined && value > schema.maximum)
      add(t('schema.max', { n: String(schema.maximum) }))
  }
  if (typeof value === 'string') {
    const length = [...value].length
    if (schema.minLength !== undefined && length < schema.minLength)
      add(t('schema.minLength', { n: String(schema.minLength) }))
    if (schema.maxLength !== undefined && length > schema.maxLength)
      add(t('schema.maxLength', { n: String(schema.maxLength) }))
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) add(t('schema.pattern'))
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      add(t('schema.minItems', { n: String(schema.minItems) }))
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      add(t('schema.maxItems', { n: String(schema.maxItems) }))
    if (schema.uniqueItems && new Set(value.map((v) => JSON.stringify(v))).size !== value.length)
      add(t('schema.unique'))
    if (schema.items)
      value.forEach((v, i) => issues.push(...validate(schema.items as JsonSchema, v, `${path}/${i}`)))
  }
  if (actual === 'object') {
    const obj = value as Record<string, unknown>
    for (const key of schema.required ?? []) if (!(key in obj)) add(t('schema.required'), `${path}/${key}`)
    if (schema.minProperties !== undefined && Object.keys(obj).length < schema.minProperties)
      add(t('schema.nonEmpty'))
    for (const [key, v] of Object.entries(obj)) {
      const sub = schema.properties?.[key]
      if (sub) issues.push(...validate(sub, v, `${path}/${key}`))
      else if (schema.additionalProperties === false) add(t('schema.unknown'), `${path}/${key}`)
      else if (typeof schema.additionalProperties === 'object')
        issues.push(...validate(schema.additionalProperties, v, `${path}/${key}`))
    }
  }
  if (schema.anyOf && !schema.anyOf.some((s) => validate(s, value, path).length === 0)) {
    add(validate(schema.anyOf[0] as JsonSchema, value, path)[0]?.message ?? t('schema.invalid'))
  }
  return issues
}

/**
 * Whether an object must be sent whole when any of it changed: one that may be null (a PATCH replaces or
 * merges it, then checks it whole, as passkeys), or one with required fields.
 */
const sentWhole = (schema: JsonSchema | undefined) =>
  Boolean(schema?.anyOf?.some((s) => s.type === 'null') || schema?.required?.length)

/**
 * The keys of `next` whose value differs from `current`, recursively: what a PATCH must send. With the
 * request's `schema`, an object it says is checked whole (sentWhole) goes whole.
 */
export function changes(
  current: Record<string, unknown>,
  next: Record<string, unknown>,
  schema?: JsonSchema,
): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(next)) {
    const before = current[key]
    const sub = schema?.properties?.[key]
    if (typeOf(value) === 'object' && typeOf(before) === 'object' && sentWhole(sub)) {
      if (JSON.stringify(value) !== JSON.stringify(before)) out[key] = value
    } else if (typeOf(value) === 'object' && typeOf(before) === 'object') {
      const inner = changes(before as Record<string, unknown>, value as Record<string, unknown>, sub)
      if (Object.keys(inner).length > 0) out[key] = inner
    } else if (JSON.stringify(value) !== JSON.stringify(before)) out[key] = value
  }
  return out
}

/**
 * The service's VALIDATION_ERROR on a body as issues of the form's fields: `body.lockout.maxSeconds` becomes
 * `/lockout/maxSeconds`, so the message shows next to its field. Empty for any other error.
 */
export function bodyIssuesOf(error: unknown): Issue[] {
  // Why by shape, not instanceof TesseraError: lib/ stays free of the SDK's runtime, for the units in Node.
  const { code, details } = (error ?? {}) as { code?: unknown; details?: unknown }
  if (code !== 'VALIDATION_ERROR' || !Array.isArray(details)) return []
  return details.flatMap((d: { path?: unknown; message?: unknown } | null) =>
    typeof d?.path === 'string' && d.path.startsWith('body.')
      ? [
          {
            path: `/${d.path.slice(5).split('.').join('/')}`,
            message: typeof d.message === 'string' ? d.message : t('schema.invalid'),
          },
        ]
      : [],
  )
}
