// The Settings screen (the form's own labels and help are in ./settings-form.ts).
export const settings = {
  'settings.saved': 'Settings saved. Changed: {changed}.',
  'settings.nothing': 'Nothing changed.',
  'settings.invalid': 'Some settings are not valid:',
  'settings.save': 'Save settings',
  'settings.secretDone':
    'A new signing secret is in use; tokens signed with the former one stay valid until they expire.',
  'settings.keyDone': 'A new signing key is in use (kid {kid}).',
  'settings.rotation': 'Signing secret and key',
  'settings.rotateWhen': 'Rotate when a secret may have leaked, or on a schedule.',
  'settings.secretHelp':
    'The signing secret signs access tokens while they are signed with HS256. A new one is in use at once; tokens signed with the former one stay valid until they expire.',
  'settings.keyHelp':
    'The signing key is the key pair of EdDSA or ES256 tokens, and of the ID tokens applications receive. A new one is in use at once; the former public key stays published for 7 days, so tokens it signed still check.',
  'settings.rotateSecret': 'Rotate the signing secret',
  'settings.rotateSecretNow': 'Rotate the secret now',
  'settings.rotateKey': 'Rotate the signing key',
  'settings.rotateKeyNow': 'Rotate the key now',
  'settings.what': 'the settings',
  'settings.auth': 'Authentication settings',
  'settings.idpHelp': 'Sign-in with Google, Microsoft, GitHub or another OpenID Connect provider.',
  'settings.manageIdp': 'Manage identity providers',
} as const
