import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import 'uplot/dist/uPlot.min.css'
import './styles.css'
import { resumeSession } from './api'
import { App } from './App'
import { SessionProvider } from './session'
import { ReauthProvider } from './reauth'
import { Interaction } from './interaction/Interaction'
import { interactionAt } from './interaction/route'

const queries = new QueryClient({
  // Why no retry: an error is shown at once with its request id; the person decides to try again.
  defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false, staleTime: 10_000 } },
})

// The provider's sign-in page (contract section 23) is this same build, served outside /console.
const interaction = interactionAt(window.location.pathname)

// The session is resumed before the first render, so a reload lands on the same screen, signed in.
void resumeSession().then(() => {
  const root = document.getElementById('root')
  if (!root) return
  createRoot(root).render(
    <StrictMode>
      <QueryClientProvider client={queries}>
        <SessionProvider>
          <ReauthProvider>{interaction ? <Interaction at={interaction} /> : <App />}</ReauthProvider>
        </SessionProvider>
      </QueryClientProvider>
    </StrictMode>,
  )
})
