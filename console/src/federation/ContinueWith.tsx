import { useState } from 'react'
import { useQuery } from '@tanstack/react-query'
import { tessera } from '../api'
import { TENANT_CODE } from '../lib/tenant-code'
import { ErrorBox } from '../ui/feedback'
import { useDebounced } from '../ui/useDebounced'
import { startFederation } from './flow'
import { t } from '../i18n'

/** How long the Tenant field rests before its providers are asked for. */
const DEBOUNCE_MS = 400

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
          {t('fed.continueWith', { name: p.name })}
        </button>
      ))}
    </div>
  )
}
