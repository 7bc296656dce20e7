import type { components } from '@tessera/client'

type PublishableKey = components['schemas']['PublishableKey']
type UpdatePublishableKeyRequest = components['schemas']['UpdatePublishableKeyRequest']

/** What the key's form edits. */
export type KeyFields = Pick<PublishableKey, 'name' | 'allowedOrigins' | 'defaultRoles' | 'signupsPerHour'>

const sameSet = (a: readonly string[], b: readonly string[]) => {
  const set = new Set(a)
  return set.size === new Set(b).size && b.every((x) => set.has(x))
}

/**
 * The PATCH body of a key's edit: only the fields that changed (lists compared as sets: order means nothing
 * to the service), so a save that leaves the default roles alone does not have them checked again. Empty
 * when nothing changed.
 */
export function keyChanges(before: KeyFields, after: KeyFields): UpdatePublishableKeyRequest {
  const out: UpdatePublishableKeyRequest = {}
  if (after.name !== before.name) out.name = after.name
  if (!sameSet(after.allowedOrigins, before.allowedOrigins)) out.allowedOrigins = after.allowedOrigins
  if (!sameSet(after.defaultRoles, before.defaultRoles)) out.defaultRoles = after.defaultRoles
  if (after.signupsPerHour !== before.signupsPerHour) out.signupsPerHour = after.signupsPerHour
  return out
}

/** A JavaScript string literal that cannot end the <script> element it sits in. */
const js = (s: string) => JSON.stringify(s).replace(/</g, '\\u003c')

/** A value for a double-quoted HTML attribute. */
const attr = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** Text that can neither end the HTML comment it sits in nor open another (no `<`, no `>`). */
const comment = (s: string) => s.replace(/[<>]/g, '')

/**
 * The HTML a site pastes into a page to sign users up with this key (contract section 20), as
 * examples/signup-page does it: the ALTCHA widget, loaded from the page's own copy of the altcha package
 * (no CDN), fetches its challenge from `service` with the key in `X-Publishable-Key` (the challenge comes
 * back in Tessera's envelope, so `customfetch` hands the widget its `data`), and the form posts the
 * identifier, the password and the widget's solution to `POST /api/v1/signup` with the same header.
 * `service` is the origin the service answers on; `allowedOrigins` are named in the comment, since the
 * page works only when served from one of them.
 */
export function signupSnippet(service: string, key: string, allowedOrigins: readonly string[]): string {
  return `<!--
  Sign-up with Tessera. Serve this page from one of the key's allowed origins:
  ${comment(allowedOrigins.join(', '))}
  Put the ALTCHA widget's script beside it, from the altcha npm package (2.x), so the page loads
  nothing from a CDN: cp node_modules/altcha/dist/altcha.js altcha.js
  A tenant that signs users up by username or CPF/CNPJ: rename the email field (and its key below).
-->
<script type="module" src="./altcha.js"></script>
<form id="tessera-signup">
  <label>Email <input name="email" type="email" required autocomplete="email" /></label>
  <label>Password <input name="password" type="password" required autocomplete="new-password" /></label>
  <altcha-widget id="tessera-altcha" challengeurl="${attr(`${service}/api/v1/signup/challenge`)}"></altcha-widget>
  <button type="submit">Sign up</button>
  <output id="tessera-result"></output>
</form>
<script type="module">
  const TESSERA = ${js(service)}
  const KEY = ${js(key)}
  // The widget fetches its challenge itself: the key goes with that request as a header, and the
  // challenge comes back as Tessera's every answer does, in \`data\` of its envelope.
  document.getElementById('tessera-altcha').configure({
    customfetch: async (url, init) => {
      const res = await fetch(url, { ...init, headers: { ...init?.headers, 'X-Publishable-Key': KEY } })
      const body = await res.json()
      return new Response(JSON.stringify(res.ok ? body.data : body), { status: res.status })
    },
  })
  document.getElementById('tessera-signup').addEventListener('submit', async (event) => {
    event.preventDefault()
    const form = new FormData(event.target)
    const res = await fetch(\`\${TESSERA}/api/v1/signup\`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Publishable-Key': KEY },
      body: JSON.stringify({
        email: form.get('email'),
        password: form.get('password'),
        altcha: form.get('altcha'), // the widget's solved proof of work
      }),
    })
    const body = await res.json()
    document.getElementById('tessera-result').textContent = res.ok ? \`Welcome, \${body.data.email}\` : body.error
  })
</script>
`
}

/** Permissions no default role may carry (the service's isManagementPermission, section 20). */
function isManagementPermission(name: string): boolean {
  return name === 'admin:*' || /^(users|roles|tenants|client-keys):/.test(name)
}

/**
 * The roles a caller may give a publishable key as its default roles: none with a management permission, none
 * with a permission the caller lacks, none above the caller's rank (the highest level of its own roles;
 * `admin:*` has no rank limit).
 */
export function givableRoles(
  roles: readonly { name: string; level: number; permissions: readonly string[] }[],
  mine: readonly string[],
  can: (permission: string) => boolean,
): string[] {
  const own = new Set(mine)
  const rank = can('admin:*')
    ? Infinity
    : Math.max(-1, ...roles.filter((r) => own.has(r.name)).map((r) => r.level))
  return roles
    .filter((r) => r.level <= rank && !r.permissions.some(isManagementPermission) && r.permissions.every(can))
    .map((r) => r.name)
}
