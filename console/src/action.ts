import { useState } from 'react'
import { useReauth } from './reauth'

/**
 * One act of the person (a button's call): its pending state and error, the password asked again in
 * place on REAUTHENTICATION_REQUIRED (then the act is retried), and `done` after a success, with the arguments the act ran with.
 */
export function useAction<A extends unknown[], R>(
  act: (...args: A) => Promise<R>,
  done?: (r: R, ...args: A) => void,
) {
  const reauth = useReauth()
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const run = async (...args: A): Promise<R | undefined> => {
    setPending(true)
    setError(null)
    try {
      const result = await reauth(() => act(...args))
      done?.(result, ...args)
      return result
    } catch (err) {
      setError(err)
      return undefined
    } finally {
      setPending(false)
    }
  }
  return { run, pending, error }
}
