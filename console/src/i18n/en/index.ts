import { kitEn } from '../../ui/words.js'
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

// The English catalogue: every key of the console, by area (a file each), with its English text.
export const en = {
  ...kitEn,
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
} as const
