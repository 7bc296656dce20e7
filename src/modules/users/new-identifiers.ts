import { fail } from '../../errors.js'
import {
  normalizeCpfCnpj,
  normalizeEmail,
  normalizeUsername,
  type IdentifierKind,
} from '../../lib/identifiers.js'

/**
 * Validates and normalises the identifiers of a user being created (register, a tenant's first admin):
 * each given one must be valid for its kind, and at least one must be of a kind the tenant enabled.
 * Throws VALIDATION_ERROR with `{ path, message }` details under `path` (e.g. `body` or `body.admin`).
 */
export function newUserIdentifiers(
  input: { email?: string; username?: string; cpf_cnpj?: string },
  enabled: readonly IdentifierKind[],
  path: string,
): { email: string | null; username: string | null; cpf_cnpj: string | null } {
  const issues: { path: string; message: string }[] = []
  const email = input.email === undefined ? null : normalizeEmail(input.email)
  // Why the raw trimmed value: the username keeps its case for display; lookups compare lowercase.
  const username =
    input.username === undefined || normalizeUsername(input.username) === null ? null : input.username.trim()
  const cpf = input.cpf_cnpj === undefined ? null : normalizeCpfCnpj(input.cpf_cnpj)
  if (input.email !== undefined && !email)
    issues.push({ path: `${path}.email`, message: 'is not a valid email' })
  if (input.username !== undefined && !username) {
    issues.push({ path: `${path}.username`, message: 'is not a valid username' })
  }
  if (input.cpf_cnpj !== undefined && !cpf) {
    issues.push({ path: `${path}.cpf_cnpj`, message: 'is not a valid CPF or CNPJ' })
  }
  const usable =
    (email && enabled.includes('email')) ||
    (username && enabled.includes('username')) ||
    (cpf && enabled.includes('cpf_cnpj'))
  if (issues.length === 0 && !usable) {
    issues.push({ path, message: `must include an identifier of an enabled kind: ${enabled.join(', ')}` })
  }
  if (issues.length > 0) fail('VALIDATION_ERROR', 'Request validation failed', issues)
  return { email, username, cpf_cnpj: cpf }
}
