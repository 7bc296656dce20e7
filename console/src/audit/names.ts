import { useQuery } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { t } from '../i18n'
import { keyIdsOf, targetOf, userIdsOf, type Names } from '../lib/audit-words'
import { useSession } from '../session'

type Row = components['schemas']['AuditRow']

/** The API's largest page: the most ids one names request takes. */
const NAMES_PAGE = 100

/** `ids` in chunks of the API's largest page. */
const chunksOf = (ids: readonly string[]) =>
  Array.from({ length: Math.ceil(ids.length / NAMES_PAGE) }, (_, i) =>
    ids.slice(i * NAMES_PAGE, (i + 1) * NAMES_PAGE),
  )

/**
 * Names for the people, roles and Client Keys a page of rows points at: one request for the users (two past
 * 100 ids), one for the keys, one for the roles when a row targets one; never one per row. Without
 * `users:read` user ids stay ids; any credential of the tenant may list its keys.
 */
export function useNames(rows: readonly Row[] | undefined): Names {
  const session = useSession()
  const ids = userIdsOf(rows ?? []).sort()
  const users = useQuery({
    queryKey: ['audit-names', ids],
    enabled: ids.length > 0 && session.can('users:read'),
    queryFn: async () => {
      const pages = await Promise.all(
        chunksOf(ids).map((chunk) =>
          tessera.GET('/api/v1/users', { params: { query: { ids: chunk.join(','), limit: NAMES_PAGE } } }),
        ),
      )
      return new Map(
        pages.flatMap((p) => p.items.map((u) => [u.id, u.email ?? u.username ?? u.cpf_cnpj ?? u.id])),
      )
    },
  })
  const keyIds = keyIdsOf(rows ?? []).sort()
  const keys = useQuery({
    queryKey: ['audit-key-names', keyIds],
    enabled: keyIds.length > 0,
    queryFn: async () => {
      // Why chunks though a page has 50 rows: a row may name two keys (the actor and the target).
      const pages = await Promise.all(
        chunksOf(keyIds).map((chunk) =>
          tessera.GET('/api/v1/client-keys/tenant', {
            params: { query: { ids: chunk.join(','), limit: NAMES_PAGE } },
          }),
        ),
      )
      return new Map(pages.flatMap((p) => p.items.map((k) => [k.id, k.name])))
    },
  })
  const wantsRoles = (rows ?? []).some((r) => targetOf(r)?.type === 'role')
  const roles = useQuery({
    queryKey: ['roles', 'names'],
    enabled: wantsRoles && session.can('roles:read'),
    queryFn: async () => {
      const page = await tessera.GET('/api/v1/roles', { params: { query: { limit: 100 } } })
      return new Map(page.items.map((r) => [r.id, r.name]))
    },
  })
  return {
    // Why the id's start for one not found: a deleted user (the log keeps what they did) or no users:read.
    user: (id) => users.data?.get(id) ?? t('audit.userId', { id: id.slice(0, 8) }),
    role: (id) => roles.data?.get(id),
    // Why null only once the answer is in: a key the tenant's list does not hold is gone.
    key: (id) => (keys.data ? (keys.data.get(id) ?? null) : undefined),
  }
}
