import type {
  PasskeyAuthenticationResponse,
  PasskeyCreationOptions,
  PasskeyRegistrationResponse,
  PasskeyRequestOptions,
} from '@tessera/client'
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/browser'
import { t } from '../i18n'

// The browser's side of a passkey (contract section 21): the options the service gave, handed to
// navigator.credentials through @simplewebauthn/browser, and its answer, handed back to the service as it is.

/**
 * @simplewebauthn/browser, loaded at the first passkey act only. Why: the first load stays within its budget
 * (contract section 19), and most visits never touch a passkey.
 */
async function browser() {
  if (typeof window.PublicKeyCredential === 'undefined') {
    throw new DOMException(t('passkey.noSupport'), 'NotSupportedError')
  }
  return import('@simplewebauthn/browser')
}

/**
 * Makes a passkey with the options of `POST /me/passkeys/options`: what `registerPasskey` of the SDK takes.
 * Why the casts: the document's JSON forms are WebAuthn Level 3's, which the library's types spell with
 * narrower strings (transports, hints) and an interface where the document has an open object.
 */
export async function createPasskey(options: PasskeyCreationOptions): Promise<PasskeyRegistrationResponse> {
  const { startRegistration } = await browser()
  const optionsJSON = options as PublicKeyCredentialCreationOptionsJSON
  return (await startRegistration({ optionsJSON })) as PasskeyRegistrationResponse
}

/** Signs the options of `POST /login/passkey/options` with a passkey the person picks. */
export async function signWithPasskey(
  options: PasskeyRequestOptions,
): Promise<PasskeyAuthenticationResponse> {
  const { startAuthentication } = await browser()
  const optionsJSON = options as PublicKeyCredentialRequestOptionsJSON
  return (await startAuthentication({ optionsJSON })) as PasskeyAuthenticationResponse
}
