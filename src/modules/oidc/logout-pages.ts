import { createHash } from 'node:crypto'

// The pages of RP-initiated logout (contract section 23, "Logout"), as the library's `logoutSource` and
// `postLogoutSuccessSource` render them: the library builds the form (its action and anti-forgery field);
// these wrap it.

/** What the library hands the page sources: its Koa context, as far as these pages read it. */
export interface LogoutPageContext {
  type: string
  body: string
  response: { get(name: string): string }
  set(name: string, value: string): void
  oidc: {
    entities: { IdTokenHint?: { payload?: { sub?: unknown } } }
    session?: { accountId?: string }
    client?: { clientName?: string; clientId: string }
  }
}

const text = (v: unknown) => String(v ?? '').replace(/[<>&"']/g, (ch) => `&#${ch.charCodeAt(0)};`)

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${text(title)}</title></head><body><main>${body}</main></body></html>`

/**
 * Allows one inline script by its hash in the response's CSP (the service's own policy allows none), and
 * forbids framing: a logout page is an action page, as the interaction's are.
 */
function allowScript(c: LogoutPageContext, script?: string): void {
  const src =
    script === undefined ? "'none'" : `'sha256-${createHash('sha256').update(script).digest('base64')}'`
  const csp = c.response.get('content-security-policy') || "default-src 'self'"
  const parts = csp
    .split(';')
    .map((d) => d.trim())
    .filter((d) => d !== '' && !/^(script-src|frame-ancestors)\s/.test(d))
  c.set('content-security-policy', [...parts, `script-src ${src}`, "frame-ancestors 'none'"].join('; '))
}

/**
 * The logout page. With an `id_token_hint` of the signed-in user it signs out without asking, as Keycloak
 * does (the form posts itself); otherwise it asks first.
 */
export function renderLogout(c: LogoutPageContext, form: string): void {
  c.type = 'html'
  const sub = c.oidc.entities.IdTokenHint?.payload?.sub
  const own = typeof sub === 'string' && sub === c.oidc.session?.accountId
  if (own) {
    const script = 'document.forms[0].submit()'
    allowScript(c, script)
    const auto = form.replace('</form>', '<input type="hidden" name="logout" value="yes"/></form>')
    c.body = page(
      'Signing out',
      `${auto}<noscript><button type="submit" form="op.logoutForm">Sign out</button></noscript><script>${script}</script>`,
    )
    return
  }
  allowScript(c)
  const from = c.oidc.client ? ` of ${text(c.oidc.client.clientName ?? c.oidc.client.clientId)}` : ''
  c.body = page(
    'Sign out',
    `<h1>Sign out${from}?</h1>${form}<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button> <button type="submit" form="op.logoutForm">No, stay signed in</button>`,
  )
}

/** The page after a logout that has no registered address to go back to. */
export function renderLoggedOut(c: LogoutPageContext): void {
  c.type = 'html'
  allowScript(c)
  const name = c.oidc.client ? ` from ${text(c.oidc.client.clientName ?? c.oidc.client.clientId)}` : ''
  c.body = page('Signed out', `<h1>Signed out</h1><p>You have signed out${name}.</p>`)
}
