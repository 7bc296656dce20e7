/** The document's pattern of a tenant code (`TenantCodeReference`): anything else would only be answered 400. */
export const TENANT_CODE = /^[A-Za-z0-9-]{1,64}$/
