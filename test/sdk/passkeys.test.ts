import t from 'tap'
import { createTesseraClient, isTesseraError, type Tokens } from '../../clients/typescript/src/index.js'
import { buildTestApp } from '../helpers/app.js'
import { createUser, PASSWORD } from '../helpers/fixtures.js'
import { SoftAuthenticator } from '../passkeys/soft-authenticator.js'
import { ORIGIN, passkeyTenant, RP_ID } from '../passkeys/support.js'

// The SDK's passkey helpers against the service over HTTP: registerPasskey (the browser's part played by the
// test's software authenticator), then passkeyLoginOptions and loginWithPasskey on a fresh client.

const app = await buildTestApp(t)
await app.listen({ port: 0, host: '127.0.0.1' })
const address = app.server.address()
if (!address || typeof address === 'string') throw new Error('no address')
const baseUrl = `http://127.0.0.1:${address.port}`

t.test(
  'loginWithPasskey: the SDK registers a passkey, then logs in with it and keeps the tokens',
  async (t) => {
    const tenant = await passkeyTenant(app)
    const user = await createUser(app, tenant)
    const auth = new SoftAuthenticator(ORIGIN, RP_ID)

    const first = createTesseraClient({ baseUrl })
    await first.login({ tenantCode: tenant.code, identifier: user.email, password: PASSWORD })
    const passkey = await first.registerPasskey(async (options) => auth.register(options), 'SDK')
    t.match(passkey, { name: 'SDK', lastUsedAt: null })

    const saved: (Tokens | null)[] = []
    const second = createTesseraClient({ baseUrl, onTokens: (tokens) => void saved.push(tokens) })
    const options = await second.passkeyLoginOptions(tenant.code)
    t.same(options.allowCredentials, [])
    const data = await second.loginWithPasskey(tenant.code, auth.login(options))
    t.equal(data.user.id, user.id)
    t.equal(saved.length, 1, 'onTokens got the new pair')
    t.equal(second.tokens?.accessToken, data.accessToken, 'the session is kept')
    const me = await second.GET('/api/v1/me', {})
    t.equal(me.id, user.id, 'and used')

    const again = await second.passkeyLoginOptions(tenant.code)
    const refused = await second
      .loginWithPasskey(tenant.code, auth.login(again, { wrongKey: true }))
      .catch((e: unknown) => e)
    t.ok(isTesseraError(refused) && refused.code === 'INVALID_CREDENTIALS', 'a refusal is a TesseraError')
  },
)
