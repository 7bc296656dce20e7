import { useQuery } from '@tanstack/react-query'
import { tessera } from './api'
import { useSession } from './session'

/** The API's largest page of permissions. */
const PAGE = 100

async function everyPermission(): Promise<string[]> {
  const names: string[] = []
  for (let offset = 0; ; offset += PAGE) {
    const page = await tessera.GET('/api/v1/permissions', { params: { query: { limit: PAGE, offset } } })
    names.push(...page.items.map((p) => p.name))
    if (page.items.length === 0 || names.length >= page.total) return names
  }
}

/**
 * The permission names to offer when editing a role or a user's grants: the tenant's, when the caller
 * may list them (`permissions:read`), else the caller's own; either way only those the caller holds, since
 * the hierarchy rule lets a caller give nothing else.
 */
export function usePermissionNames(): { names: string[]; pending: boolean; error: unknown } {
  const session = useSession()
  const canList = session.can('permissions:read')
  const all = useQuery({ queryKey: ['permissions', 'all'], queryFn: everyPermission, enabled: canList })
  if (!canList) return { names: [...session.permissions], pending: false, error: null }
  // Why filter: the list holds `admin:*` and what the caller lacks, which the server would refuse to give.
  const names = (all.data ?? []).filter((p) => session.can(p))
  return { names, pending: all.isPending, error: all.error }
}
