import { useEffect, useState } from 'react'

/** `value` once it has rested for `ms`: a field typed into asks the API once, not at every key. */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value)
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms)
    return () => clearTimeout(timer)
  }, [value, ms])
  return settled
}
