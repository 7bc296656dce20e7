import { useQuery } from '@tanstack/react-query'
import { tessera } from '../api'
import { policyWords } from '../lib/password-policy'

/**
 * The signed-in caller's tenant's password rule, shown under a new-password field before it is sent (the same
 * read as the passkeys' check: one request, cached); nothing until it is known. `id` is for aria-describedby.
 */
export function PasswordRule({ id }: { id: string }) {
  const config = useQuery({
    queryKey: ['tenant', 'me', 'config'],
    queryFn: () => tessera.GET('/api/v1/tenants/me/config'),
    staleTime: 60_000,
  })
  const policy = config.data?.passwordPolicy
  return (
    <small id={id} className="muted">
      {policy ? policyWords(policy) : ''}
    </small>
  )
}
