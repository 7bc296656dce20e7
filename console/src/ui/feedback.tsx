import type { ReactNode } from 'react'
import { TesseraError } from '@tessera/client'

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
