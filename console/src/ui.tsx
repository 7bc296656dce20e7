import { useState, type ReactNode } from 'react'
import { TesseraError } from '@tessera/client'
import { useReauth } from './reauth'

/** An error as the contract words it, with its code and the request id to quote. */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null
  if (error instanceof TesseraError) {
    return (
      <div role="alert" className="error">
        <p>
          {error.status === 403 ? 'Not allowed: ' : ''}
          {error.message} <code>{error.code}</code>
        </p>
        {Array.isArray(error.details) && error.details.length > 0 && (
          <ul>
            {error.details.map((d, i) => (
              <li key={i}>{typeof d === 'string' ? d : `${d.path ?? ''} ${d.message ?? ''}`.trim()}</li>
            ))}
          </ul>
        )}
        {error.requestId && <p className="muted">Request id: {error.requestId}</p>}
      </div>
    )
  }
  return (
    <div role="alert" className="error">
      <p>
        {error instanceof Error ? error.message : 'Something went wrong.'} The service could not be reached.
      </p>
    </div>
  )
}

export function Loading({ what }: { what: string }) {
  return (
    <p role="status" className="muted">
      Loading {what}…
    </p>
  )
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>
}

/** Previous/next over a list with `total`, `limit` and `offset`, as every list of the API answers. */
export function Pager(props: {
  total: number
  limit: number
  offset: number
  onOffset: (n: number) => void
}) {
  const { total, limit, offset, onOffset } = props
  if (total <= limit) return null
  const last = Math.min(offset + limit, total)
  return (
    <nav aria-label="Pages" className="pager">
      <button type="button" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - limit))}>
        Previous page
      </button>
      <span>
        {offset + 1}–{last} of {total}
      </span>
      <button type="button" disabled={last >= total} onClick={() => onOffset(offset + limit)}>
        Next page
      </button>
    </nav>
  )
}

/**
 * One act of the person (a button's call): its pending state and error, the password asked again in
 * place on REAUTHENTICATION_REQUIRED (then the act is retried), and `done` after a success.
 */
export function useAction<A extends unknown[], R>(act: (...args: A) => Promise<R>, done?: (r: R) => void) {
  const reauth = useReauth()
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const run = async (...args: A): Promise<R | undefined> => {
    setPending(true)
    setError(null)
    try {
      const result = await reauth(() => act(...args))
      done?.(result)
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

export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—'
}

/**
 * A button whose act needs a second, explicit click: the first shows what will happen and the confirming
 * button in its place (in the page, reachable by keyboard, unlike window.confirm).
 */
export function ConfirmButton(props: {
  label: string
  confirm: string
  onConfirm: () => void
  warning?: string
}) {
  const [asking, setAsking] = useState(false)
  if (!asking) {
    return (
      <button type="button" onClick={() => setAsking(true)}>
        {props.label}
      </button>
    )
  }
  return (
    <span className="confirm" role="group" aria-label={props.label}>
      <span>{props.warning ?? 'Are you sure?'}</span>
      <button
        type="button"
        className="danger"
        autoFocus
        onClick={() => {
          setAsking(false)
          props.onConfirm()
        }}
      >
        {props.confirm}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  )
}
