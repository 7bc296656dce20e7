import type { WordsOf } from '../../ui/i18n.js'
import type { en } from '../en/index.js'
import { kit } from './kit.js'
import { shell } from './shell.js'
import { overview } from './overview.js'
import { users } from './users.js'
import { settings } from './settings.js'
import { auditWords } from './audit-words.js'
import { words } from './words.js'
import { account } from './account.js'
import { signIn } from './sign-in.js'
import { interaction } from './interaction.js'
import { settingsForm } from './settings-form.js'
import { branding } from './branding.js'
import { user } from './user.js'
import { tenants } from './tenants.js'
import { audit } from './audit.js'
import { keys } from './keys.js'
import { applications } from './applications.js'
import { federation } from './federation.js'
import { publishable } from './publishable.js'
import { roles } from './roles.js'
import { passkeys } from './passkeys.js'

// Brazilian Portuguese, in the words of the service's mails (src/modules/email/templates.ts): "você",
// "senha", "e-mail", "conta". Loaded only when chosen (a dynamic import), outside the first load.
export const ptBR: WordsOf<typeof en> = {
  ...kit,
  ...shell,
  ...overview,
  ...users,
  ...settings,
  ...auditWords,
  ...words,
  ...account,
  ...signIn,
  ...interaction,
  ...settingsForm,
  ...branding,
  ...user,
  ...tenants,
  ...audit,
  ...keys,
  ...applications,
  ...federation,
  ...publishable,
  ...roles,
  ...passkeys,
}
