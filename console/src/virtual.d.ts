// Written at build time from generated/openapi.json by vite.config.ts (documentSchemas).
declare module 'virtual:tessera-schemas' {
  import type { components } from '@tessera/client'
  import type { JsonSchema } from './lib/schema'
  /** AuthConfigPatch with every $ref resolved: what PATCH /tenants/{id}/config accepts. */
  export const authConfigPatch: JsonSchema
  /** The AuditAction enum, in the document's order. */
  export const auditActions: components['schemas']['AuditAction'][]
}
