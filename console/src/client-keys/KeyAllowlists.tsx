import { useState, type FormEvent } from 'react'
import { useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { parseList } from '../lib/key-usage'
import { useSession } from '../session'
import { useAction } from '../action'
import { FormFooter } from '../ui/FormFooter'
import { t } from '../i18n'

type ClientKey = components['schemas']['ClientKey']

/**
 * The key's IP and origin allowlists, edited through the key's PATCH (each list replaced whole). Read-only
 * for a caller without `client-keys:update`, and for a key that no longer works.
 */
export function KeyAllowlists({ k }: { k: ClientKey }) {
  const session = useSession()
  const queries = useQueryClient()
  const [saved, setSaved] = useState('')
  const save = useAction(
    (body: { ipAllowlist: string[]; originAllowlist: string[] }) =>
      tessera.PATCH('/api/v1/client-keys/{id}', { params: { path: { id: k.id } }, body }),
    (updated) => {
      queries.setQueryData(['keys', k.id], updated)
      void queries.invalidateQueries({ queryKey: ['keys'] })
      setSaved(t('allow.saved'))
    },
  )
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setSaved('')
    const f = new FormData(e.currentTarget)
    void save.run({
      ipAllowlist: parseList(String(f.get('ips') ?? '')),
      originAllowlist: parseList(String(f.get('origins') ?? '')),
    })
  }
  if (!session.can('client-keys:update') || k.status !== 'ACTIVE') {
    return (
      <section aria-labelledby="allowlists" className="panel">
        <h2 id="allowlists">{t('allow.title')}</h2>
        <dl className="facts">
          <dt>{t('allow.ip')}</dt>
          <dd>{k.ipAllowlist.length ? k.ipAllowlist.join(', ') : t('allow.anyAddress')}</dd>
          <dt>{t('pk.origins')}</dt>
          <dd>{k.originAllowlist.length ? k.originAllowlist.join(', ') : t('allow.anyOrigin')}</dd>
        </dl>
      </section>
    )
  }
  return (
    <form aria-labelledby="allowlists" className="panel stack" onSubmit={submit}>
      <h2 id="allowlists">{t('allow.title')}</h2>
      <label>
        {t('allow.ip')}
        <textarea name="ips" rows={3} defaultValue={k.ipAllowlist.join('\n')} aria-describedby="ips-help" />
      </label>
      <p id="ips-help" className="muted">
        {t('allow.ipHelp')}
      </p>
      <label>
        {t('pk.origins')}
        <textarea
          name="origins"
          rows={3}
          defaultValue={k.originAllowlist.join('\n')}
          aria-describedby="origins-help"
        />
      </label>
      <p id="origins-help" className="muted">
        {t('allow.originHelp')}
      </p>
      <FormFooter submit={t('allow.save')} error={save.error} pending={save.pending} status={saved} />
    </form>
  )
}
