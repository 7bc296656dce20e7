import type { ReactNode } from 'react'
import { TesseraError } from '@tessera/client'
import { kt } from './words'

/** A refusal the console itself words (a lookup that found no one, say): shown as it is, no code. */
export class PlainError extends Error {}

/** An error as the contract words it; its code and the request id in a line of their own, for support. */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null
  if (error instanceof PlainError) {
    return (
      <div role="alert" className="error">
        <p>{error.message}</p>
      </div>
    )
  }
  if (error instanceof TesseraError) {
    return (
      <div role="alert" className="error">
        <p>
          {error.status === 403 ? kt('kit.notAllowed') : ''}
          {error.message}
        </p>
        {Array.isArray(error.details) && error.details.length > 0 && (
          <ul>
            {error.details.map((d, i) => (
              <li key={i}>{typeof d === 'string' ? d : `${d.path ?? ''} ${d.message ?? ''}`.trim()}</li>
            ))}
          </ul>
        )}
        <p className="muted">
          {kt('kit.support')} <code>{error.code}</code>
          {error.requestId && kt('kit.requestId', { id: error.requestId })}
        </p>
      </div>
    )
  }
  return (
    <div role="alert" className="error">
      <p>
        {error instanceof Error ? error.message : kt('kit.wrong')} {kt('kit.unreachable')}
      </p>
    </div>
  )
}

export function Loading({ what }: { what: string }) {
  return (
    <p role="status" className="muted">
      {kt('kit.loading', { what })}
    </p>
  )
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>
}
