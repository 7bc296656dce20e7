import { useState, type FormEvent } from 'react'
import { useQueryClient } from '@tanstack/react-query'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { parseList } from '../lib/key-usage'
import { useSession } from '../session'
import { useAction } from '../action'
import { FormFooter } from '../ui/FormFooter'

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
      setSaved('Allowlists saved.')
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
        <h2 id="allowlists">Allowlists</h2>
        <dl className="facts">
          <dt>IP allowlist</dt>
          <dd>{k.ipAllowlist.length ? k.ipAllowlist.join(', ') : 'Any address'}</dd>
          <dt>Allowed origins</dt>
          <dd>{k.originAllowlist.length ? k.originAllowlist.join(', ') : 'Any origin'}</dd>
        </dl>
      </section>
    )
  }
  return (
    <form aria-labelledby="allowlists" className="panel stack" onSubmit={submit}>
      <h2 id="allowlists">Allowlists</h2>
      <label>
        IP allowlist
        <textarea name="ips" rows={3} defaultValue={k.ipAllowlist.join('\n')} aria-describedby="ips-help" />
      </label>
      <p id="ips-help" className="muted">
        CIDR ranges, IPv4 or IPv6, one a line (203.0.113.0/24). Empty: any address.
      </p>
      <label>
        Allowed origins
        <textarea
          name="origins"
          rows={3}
          defaultValue={k.originAllowlist.join('\n')}
          aria-describedby="origins-help"
        />
      </label>
      <p id="origins-help" className="muted">
        Exact origins, one a line (https://app.example.com). Empty: any origin; a request without an Origin
        header is always allowed.
      </p>
      <FormFooter submit="Save allowlists" error={save.error} pending={save.pending} status={saved} />
    </form>
  )
}
