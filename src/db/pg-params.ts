// Query parameters for PGlite, serialized the way `pg` (node-postgres, lib/utils.js prepareValue) does.
// Why: PGlite serializes by the parameter's type and so accepts things pg refuses (a JS array for a jsonb
// column); tests on PGlite must fail where production on PostgreSQL would.

/** A parameter as pg would send it: text, null, or raw bytes (bytea). */
export type PreparedParam = string | Uint8Array | null

/** Serializes one query parameter exactly as pg does (Dates as ISO instants, arrays as array literals). */
export function preparePgParam(value: unknown): PreparedParam {
  return prepare(value, [])
}

function prepare(value: unknown, seen: unknown[]): PreparedParam {
  if (value === null || value === undefined) return null
  if (typeof value !== 'object') return String(value)
  if (value instanceof Uint8Array) return value
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
  if (value instanceof Date) return dateText(value)
  if (Array.isArray(value)) return arrayLiteral(value)
  const custom = value as { toPostgres?: unknown }
  if (typeof custom.toPostgres === 'function') {
    if (seen.includes(value)) throw new Error('circular reference detected while preparing a query parameter')
    const next = (custom.toPostgres as (p: (v: unknown) => PreparedParam) => unknown)((v) => prepare(v, []))
    return prepare(next, [...seen, value])
  }
  return JSON.stringify(value)
}

function dateText(d: Date): string {
  // pg writes local time with an offset; the ISO form is the same instant. An invalid Date stays invalid
  // text, so PostgreSQL refuses it as it does through pg.
  return Number.isNaN(d.getTime()) ? 'Invalid Date' : d.toISOString()
}

function arrayLiteral(values: readonly unknown[]): string {
  const parts = values.map((item) => {
    if (item === null || item === undefined) return 'NULL'
    if (Array.isArray(item)) return arrayLiteral(item)
    if (ArrayBuffer.isView(item)) {
      return '\\\\x' + Buffer.from(item.buffer, item.byteOffset, item.byteLength).toString('hex')
    }
    const text = prepare(item, [])
    const s = typeof text === 'string' ? text : ''
    return '"' + s.replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"'
  })
  return '{' + parts.join(',') + '}'
}
