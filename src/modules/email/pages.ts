import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { routes } from '../../../generated/routes.js'
import { html, SafeHtml } from './templates.js'

// The pages the default links lead to, until the console (contract section 19) serves its own: a form
// that calls the API from the browser. The server never reads the token here; the script does, takes it
// out of the address bar, and posts it as JSON. Inline script and style are allowed by their hashes only.

const STYLE = `body{font-family:sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
input,button{font:inherit;padding:.4rem;width:100%;box-sizing:border-box;margin:.3rem 0}
#out{min-height:1.5rem}`

// Why textContent only: nothing the API answers is ever parsed as HTML.
const SCRIPT = `(function(){
var q=new URLSearchParams(location.search),tenant=q.get('tenant')||'',token=q.get('token')||'';
history.replaceState(null,'',location.pathname);
var out=document.getElementById('out'),form=document.getElementById('f');
if(!tenant||!token){out.textContent='This link is incomplete: open the one in your mail again.';form.hidden=true;return;}
form.addEventListener('submit',function(e){
  e.preventDefault();
  var body={tenantCode:tenant,token:token},pw=document.getElementById('pw');
  if(pw){body.newPassword=pw.value;}
  out.textContent='…';
  fetch(form.dataset.api,{method:'POST',headers:{'content-type':'application/json'},body:JSON.stringify(body)})
    .then(function(r){return r.json();})
    .then(function(r){
      if(r.success){out.textContent=form.dataset.done;form.hidden=true;}
      else if(r.code==='PASSWORD_POLICY_VIOLATION'){out.textContent='This password does not meet the policy: '+(r.details||[]).join(', ');}
      else if(r.code==='INVALID_EMAIL_TOKEN'){out.textContent='This link is no longer valid: ask for a new one.';form.hidden=true;}
      else{out.textContent=r.error||'Something went wrong; try again.';}
    },function(){out.textContent='The service could not be reached; try again.';});
});
})();`

const sha = (s: string) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`

/** The CSP of a rendered page: its inline script and style by the hashes of exactly what it holds. */
function cspOf(body: string): string {
  const inner = (tag: string) => new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(body)?.[1] ?? ''
  return [
    "default-src 'none'",
    `script-src ${sha(inner('script'))}`,
    `style-src ${sha(inner('style'))}`,
    "connect-src 'self'",
    "form-action 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ')
}

/** A page around `form`; the script and style are our own constants, kept verbatim (their hashes are in the CSP). */
function page(title: string, form: SafeHtml): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>${title}</title>
        <style>
          ${new SafeHtml(STYLE)}
        </style>
      </head>
      <body>
        <h1>${title}</h1>
        ${form}
        <p id="out" role="status"></p>
        <script>
          ${new SafeHtml(SCRIPT)}
        </script>
      </body>
    </html> `.value
}

const RESET = page(
  'Choose a new password',
  html`<form
    id="f"
    data-api="/api/v1/password/reset"
    data-done="Your password was changed. You can sign in with it now."
  >
    <label for="pw">New password</label>
    <input id="pw" type="password" autocomplete="new-password" required minlength="8" maxlength="256" />
    <button type="submit">Set the password</button>
  </form>`,
)

const VERIFY = page(
  'Confirm your email address',
  html`<form
    id="f"
    data-api="/api/v1/email/verify"
    data-done="Your address is confirmed. You can close this page."
  >
    <button type="submit">Confirm my address</button>
  </form>`,
)

/** GET /console/reset-password and /console/verify-email: HTML, registered without defineRoute (not JSON). */
export function registerPages(app: FastifyInstance): void {
  for (const [id, body] of [
    ['getResetPasswordPage', RESET],
    ['getVerifyEmailPage', VERIFY],
  ] as const) {
    const spec = routes[id]
    const csp = cspOf(body)
    app.route({
      method: spec.method,
      url: spec.url,
      schema: { querystring: spec.schema.querystring },
      config: { operationId: id, spec },
      handler: async (_req, reply) =>
        reply
          .header('content-security-policy', csp)
          .header('cache-control', 'no-store')
          .header('referrer-policy', 'no-referrer')
          .type('text/html; charset=utf-8')
          .send(body),
    })
  }
}
