import { resolveAuthConfig } from '../../security/auth-config.js'
import type { TenantListRow } from './queries.js'

const iso = (d: Date | string): string => new Date(d).toISOString()

/** The `Tenant` object (openapi/components/tenants.yaml). Never metadata, secrets or database credentials. */
export function toTenantDto(row: TenantListRow) {
  return {
    id: row.id,
    code: row.code,
    name: row.name,
    status: row.status === 'INACTIVE' ? ('INACTIVE' as const) : ('ACTIVE' as const),
    auth_config: resolveAuthConfig(row.auth_config),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    database: { dedicated: row.db_host !== null, host: row.db_host, database: row.db_name },
  }
}

export type TenantDto = ReturnType<typeof toTenantDto>
