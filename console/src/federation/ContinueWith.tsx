import { useEffect, useState } from 'react'
import { useQuery } from '@tanstack/react-query'
import { tessera } from '../api'
import { ErrorBox } from '../ui/feedback'
import { startFederation } from './flow'

/** The document's pattern of a tenant code: anything else would only be answered 400. */
const TENANT_CODE = /^[A-Za-z0-9-]{1,64}$/
/** How long the Tenant field rests before its providers are asked for. */
const DEBOUNCE_MS = 400

function useDebounced(value: string, ms: number): string {
  const [settled, setSettled] = useState(value)
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms)
    return () => clearTimeout(timer)
  }, [value, ms])
  return settled
}

/**
 * "Continue with {name}" for each provider the tenant shows on its sign-in page (contract section 24). The
 * list follows the Tenant field; when it cannot be read, no button is shown (the password still works).
 */
export function ContinueWith({ tenantCode }: { tenantCode: string }) {
  const code = useDebounced(tenantCode.trim(), DEBOUNCE_MS)
  const valid = TENANT_CODE.test(code)
  const providers = useQuery({
    queryKey: ['login-providers', code.toLowerCase()],
    queryFn: () => tessera.GET('/api/v1/login/providers', { params: { query: { tenantCode: code } } }),
    enabled: valid,
    staleTime: 60_000,
  })
  const [leaving, setLeaving] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const items = valid ? (providers.data?.items ?? []) : []
  if (items.length === 0) return null
  const go = (provider: { id: string; name: string }) => {
    setLeaving(true)
    setError(null)
    startFederation(code, provider).catch((err: unknown) => {
      setLeaving(false)
      setError(err)
    })
  }
  return (
    <div className="stack alternative">
      <ErrorBox error={error} />
      {items.map((p) => (
        <button key={p.id} type="button" className="secondary" disabled={leaving} onClick={() => go(p)}>
          Continue with {p.name}
        </button>
      ))}
    </div>
  )
}
