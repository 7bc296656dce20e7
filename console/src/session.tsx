import { createContext, useContext, useState, type ReactNode } from 'react'
import { useQueryClient } from '@tanstack/react-query'
import { tessera } from './api'
import { covers } from './lib/permissions'
import { navigate } from './router'

interface Session {
  signedIn: boolean
  tenantCode: string
  userId: string
  permissions: readonly string[]
  /** Whether the token's permissions cover this one: what to show, never what is allowed. */
  can: (permission: string) => boolean
  /** Re-reads the token's claims (after a login, a reauthentication, a refresh). */
  update: () => void
  signOut: () => Promise<void>
}

const SessionContext = createContext<Session | null>(null)

function fromClaims() {
  const claims = tessera.tokens?.accessToken ? tessera.claims() : null
  return {
    signedIn: claims !== null,
    tenantCode: claims?.tenantCode ?? '',
    userId: claims?.sub ?? '',
    permissions: claims?.permissions ?? [],
  }
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState(fromClaims)
  const queries = useQueryClient()
  const session: Session = {
    ...state,
    can: (permission) => covers(state.permissions, permission),
    update: () => setState(fromClaims()),
    signOut: async () => {
      // Why ignore a failure: the tokens are forgotten locally either way (the SDK's logout does it).
      await tessera.logout().catch(() => undefined)
      queries.clear()
      setState(fromClaims())
      navigate('/sign-in')
    },
  }
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>
}

export function useSession(): Session {
  const session = useContext(SessionContext)
  if (!session) throw new Error('useSession outside SessionProvider')
  return session
}
