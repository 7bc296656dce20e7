// The words of screens/SignIn.tsx.
export const signIn = {
  'signIn.title': 'Sign in',
  'signIn.recovery': 'Recovery codes',
  'signIn.keepCodes':
    'Keep these codes somewhere safe: each signs you in once without your authenticator. They are shown only now.',
  'signIn.continue': 'Continue',
  'signIn.tenant': 'Tenant',
  'signIn.identifier': 'Email, username or CPF/CNPJ',
  'signIn.password': 'Password',
  'signIn.enterCode': 'Enter the code from your authenticator app, or a recovery code.',
  'forgot.sent':
    'If an account with a mail address matches, a mail with a link to choose a new password is on its way. The link can be used once.',
  'forgot.send': 'Send the link',
  'forgot.back': 'Back to sign in',
  'links.incomplete': 'This link is incomplete: open the one in your mail again.',
  'links.spent': 'This link is no longer valid: ask for a new one.',
  'links.resetTitle': 'Choose a new password',
  'links.resetButton': 'Set the password',
  'links.resetDone': 'Your password was changed. You can sign in with it now.',
  'links.verifyTitle': 'Confirm your email address',
  'links.verifyButton': 'Confirm my address',
  'links.verifyDone': 'Your address is confirmed. You can close this page.',
  'links.press': 'Press the button to confirm that this address is yours.',
} as const
