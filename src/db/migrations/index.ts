import type { Migration } from 'kysely'
import { initial } from './0001_initial.js'
import { auditGuard } from './0002_audit_guard.js'
import { accountLifecycle } from './0003_account_lifecycle.js'
import { secondFactor } from './0004_second_factor.js'
import { signingKeys } from './0005_signing_keys.js'
import { retention } from './0006_retention.js'
import { scaleIndexes } from './0007_scale_indexes.js'
import { auditSchema } from './0008_audit_schema.js'
import { keyCreators } from './0009_key_creators.js'
import { hotSessions } from './0010_hot_sessions.js'
import { email } from './0011_email.js'
import { publishableKeys } from './0012_publishable_keys.js'
import { passkeys } from './0013_passkeys.js'
import { auditRollup } from './0014_audit_rollup.js'
import { thirdReview } from './0015_third_review.js'
import { oidcProvider } from './0016_oidc_provider.js'
import { identityProviders } from './0017_identity_providers.js'
import { federationFlows } from './0018_federation_flows.js'
import { federationLinks } from './0019_federation_links.js'
import { refreshSelectors } from './0020_refresh_selectors.js'
import { auditExpireFrom } from './0021_audit_expire_from.js'
import { keyUsageRollup } from './0022_key_usage_rollup.js'

/** Every migration, by name in apply order; static so nothing scans the filesystem at start. */
export const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_audit_guard': auditGuard,
  '0003_account_lifecycle': accountLifecycle,
  '0004_second_factor': secondFactor,
  '0005_signing_keys': signingKeys,
  '0006_retention': retention,
  '0007_scale_indexes': scaleIndexes,
  '0008_audit_schema': auditSchema,
  '0009_key_creators': keyCreators,
  '0010_hot_sessions': hotSessions,
  '0011_email': email,
  '0012_publishable_keys': publishableKeys,
  '0013_passkeys': passkeys,
  '0014_audit_rollup': auditRollup,
  '0015_third_review': thirdReview,
  '0016_oidc_provider': oidcProvider,
  '0017_identity_providers': identityProviders,
  '0018_federation_flows': federationFlows,
  '0019_federation_links': federationLinks,
  '0020_refresh_selectors': refreshSelectors,
  '0021_audit_expire_from': auditExpireFrom,
  '0022_key_usage_rollup': keyUsageRollup,
}
