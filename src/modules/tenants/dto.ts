import { resolveAuthConfig } from './auth-config.js'

/** A tenant row as the list/get queries return it (tenant columns plus where its rows live). */
export interface TenantDtoRow {
  id: string
  code: string
  name: string
  status: string
  auth_config: unknown
  created_at: Date | string
  updated_at: Date | string
  db_host: string | null
  db_name: string | null
}

const iso = (d: Date | string): string => new Date(d).toISOString()

/** The contract's tenant object (section 7). Never metadata, secrets or database credentials. */
export function toTenantDto(row: TenantDtoRow) {
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
