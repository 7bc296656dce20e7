/** A stored JSON object column (jsonb as an object, or its text) as a plain object; `{}` for anything else. */
export function asObject(v: unknown): Record<string, unknown> {
  const o: unknown = typeof v === 'string' ? JSON.parse(v) : v
  return typeof o === 'object' && o !== null && !Array.isArray(o) ? { ...(o as Record<string, unknown>) } : {}
}
