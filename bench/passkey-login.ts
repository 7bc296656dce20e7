import type autocannon from 'autocannon'
import { SoftAuthenticator } from '../test/passkeys/soft-authenticator.js'

// The passkey login workload of bench/auth.ts: each sequence asks for options (a challenge), then answers
// it with an ES256 signature of the test suite's software authenticator (no bcrypt anywhere). Counters stay
// 0, as synced passkeys keep them, so concurrent sequences never race on one.

export const PASSKEY_ORIGIN = 'http://localhost'
export const PASSKEY_RP_ID = 'localhost'

/** Registers one software passkey per access token through the API (options, then the answer). */
export async function registerPasskeys(base: string, accessTokens: string[]): Promise<SoftAuthenticator[]> {
  const post = async (path: string, token: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    })
    const json = (await res.json()) as { data?: unknown }
    if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`)
    return json.data
  }
  const out: SoftAuthenticator[] = []
  for (const token of accessTokens) {
    const auth = new SoftAuthenticator(PASSKEY_ORIGIN, PASSKEY_RP_ID, false)
    const options = (await post('/api/v1/me/passkeys/options', token, {})) as {
      challenge: string
      user: { id: string }
    }
    await post('/api/v1/me/passkeys', token, { response: auth.register(options) })
    out.push(auth)
  }
  return out
}

/** Two requests per login: POST /login/passkey/options, then POST /login/passkey with the signed answer. */
export function passkeyRequests(
  auths: SoftAuthenticator[],
  tenantCode: string,
  tally: { completed: number; failed: number },
): autocannon.Request[] {
  let next = 0
  return [
    {
      method: 'POST',
      path: '/api/v1/login/passkey/options',
      body: JSON.stringify({ tenantCode }),
      onResponse: (status, body, context) => {
        if (status !== 200) tally.failed++
        ;(context as { challenge?: string }).challenge = (
          JSON.parse(body) as { data?: { challenge?: string } }
        ).data?.challenge
      },
    },
    {
      method: 'POST',
      path: '/api/v1/login/passkey',
      setupRequest: (req, context) => {
        const auth = auths[next++ % auths.length] as SoftAuthenticator
        const challenge = (context as { challenge?: string }).challenge ?? ''
        return { ...req, body: JSON.stringify({ tenantCode, response: auth.login({ challenge }) }) }
      },
      onResponse: (status) => {
        if (status === 200) tally.completed++
        else tally.failed++
      },
    },
  ]
}
