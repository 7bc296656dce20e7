import { ErrorBox, Loading } from '../ui/feedback'
import { usePermissionNames } from '../permission-names'
import { choices } from '../lib/role-diff'
import { t } from '../i18n'

/**
 * A fieldset of one checkbox a permission (`name="permission"`), the `held` ones checked at first: what
 * the role create and edit forms read with FormData.
 */
export function PermissionChecks({ held = [], legend }: { held?: readonly string[]; legend?: string }) {
  const known = usePermissionNames()
  return (
    <fieldset>
      <legend>{legend ?? t('screen.permissions')}</legend>
      {known.pending && <Loading what={t('role.permsWhat')} />}
      <ErrorBox error={known.error} />
      <div className="checks">
        {choices(known.names, held).map((p) => (
          <label key={p} className="check">
            <input type="checkbox" name="permission" value={p} defaultChecked={held.includes(p)} /> {p}
          </label>
        ))}
      </div>
    </fieldset>
  )
}
