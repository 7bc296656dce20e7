import { useQuery } from '@tanstack/react-query'
import { tessera } from '../api'
import { passwordTooLong, policyWords } from '../lib/password-policy'
import { PlainError } from '../ui/feedback'

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

/** The new password, checked for the rule every tenant has (72 bytes) before it is sent; throws it in words. */
export function fitting(password: string): string {
  const problem = passwordTooLong(password)
  if (problem) throw new PlainError(problem)
  return password
}
