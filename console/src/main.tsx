import { Fragment, StrictMode, type ReactNode } from 'react'
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
import { chooseLocale } from './i18n'
import { locale, useLocale } from './ui/i18n'

const queries = new QueryClient({
  // Why no retry: an error is shown at once with its request id; the person decides to try again.
  defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false, staleTime: 10_000 } },
})

// The provider's sign-in page (contract section 23) is this same build, served outside /console.
const interaction = interactionAt(window.location.pathname)

/** The screens, drawn anew in the language chosen (the switch): every word is looked up again. */
function Localized({ children }: { children: ReactNode }) {
  return <Fragment key={useLocale()}>{children}</Fragment>
}

// The session is resumed and the reader's language loaded before the first render, so a reload lands on the
// same screen, signed in, in its language.
void Promise.all([resumeSession(), chooseLocale(locale())]).then(() => {
  const root = document.getElementById('root')
  if (!root) return
  createRoot(root).render(
    <StrictMode>
      <QueryClientProvider client={queries}>
        <SessionProvider>
          <ReauthProvider>
            <Localized>{interaction ? <Interaction at={interaction} /> : <App />}</Localized>
          </ReauthProvider>
        </SessionProvider>
      </QueryClientProvider>
    </StrictMode>,
  )
})
