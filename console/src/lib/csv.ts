/**
 * One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, quotes doubled. A field
 * that a spreadsheet would run as a formula (=, +, -, @, tab, CR first) gets a leading apostrophe: an
 * audit row's user agent is written by whoever made the request.
 */
export function csvField(value: unknown): string {
  let s =
    value === null || value === undefined
      ? ''
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value)
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

/** Rows of objects as CSV with a header of `columns`, CRLF line ends. */
export function toCsv<T extends object>(rows: readonly T[], columns: readonly (keyof T & string)[]): string {
  const lines = [columns.join(',')]
  for (const row of rows) lines.push(columns.map((c) => csvField(row[c])).join(','))
  return lines.join('\r\n') + '\r\n'
}
