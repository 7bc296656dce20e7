import { useState, type FormEvent } from 'react'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import type { Passkey } from '@tessera/client'
import { tessera } from '../api'
import { useAction } from '../action'
import { ConfirmButton } from '../ui/ConfirmButton'
import { FormFooter } from '../ui/FormFooter'
import { List } from '../ui/List'
import { PasskeyError, PasskeyFacts, PasskeysOff, passkeysOff, usePasskeysOn } from './common'
import { createPasskey } from './webauthn'
import { t } from '../i18n'

const KEY = ['me', 'passkeys']
/** The most the list operation gives in one page. */
const LIMIT = 100

/** One passkey of the signed-in user, with "Rename" (in place) and "Remove" (confirmed). */
function Item(props: {
  passkey: Passkey
  rename: (id: string, name: string) => Promise<unknown>
  remove: (id: string) => Promise<unknown>
}) {
  const { passkey } = props
  const [renaming, setRenaming] = useState(false)
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const name = String(new FormData(e.currentTarget).get('name')).trim()
    if (name === passkey.name) return setRenaming(false)
    void props.rename(passkey.id, name).then((r) => r && setRenaming(false))
  }
  if (renaming) {
    return (
      <li>
        <form className="row" onSubmit={submit}>
          <label>
            {t('passkey.newName')}
            <input name="name" defaultValue={passkey.name} maxLength={64} required autoFocus />
          </label>
          <FormFooter submit={t('passkey.saveName')} onCancel={() => setRenaming(false)} layout="inline" />
        </form>
      </li>
    )
  }
  return (
    <li>
      <PasskeyFacts passkey={passkey} />
      <span className="row">
        <button
          type="button"
          onClick={() => setRenaming(true)}
          aria-label={t('passkey.renameName', { name: passkey.name })}
        >
          {t('passkey.rename')}
        </button>
        <ConfirmButton
          label={t('passkey.removeName', { name: passkey.name })}
          confirm={t('passkey.removeNow')}
          warning={t('passkey.removeWarning')}
          onConfirm={() => void props.remove(passkey.id)}
        />
      </span>
    </li>
  )
}

/**
 * Account → Passkeys (contract sections 19 and 21): the signed-in user's passkeys, adding one with the
 * browser's authenticator, renaming and removing. Adding and removing need a recent sign-in: useAction asks
 * for the password in place and goes on (section 22).
 */
export function MyPasskeys() {
  const queries = useQueryClient()
  const refresh = () => void queries.invalidateQueries({ queryKey: KEY })
  const [done, setDone] = useState('')
  const on = usePasskeysOn()
  const list = useQuery({
    enabled: on === true,
    queryKey: KEY,
    queryFn: () => tessera.GET('/api/v1/me/passkeys', { params: { query: { limit: LIMIT } } }),
  })
  const add = useAction(
    (name: string) => tessera.registerPasskey(createPasskey, name === '' ? undefined : name),
    (p) => {
      setDone(t('passkey.added', { name: p.name }))
      refresh()
    },
  )
  const rename = useAction(
    (id: string, name: string) =>
      tessera.PATCH('/api/v1/me/passkeys/{id}', { params: { path: { id } }, body: { name } }),
    (p) => {
      setDone(t('passkey.renamed', { name: p.name }))
      refresh()
    },
  )
  const remove = useAction(
    (id: string) => tessera.DELETE('/api/v1/me/passkeys/{id}', { params: { path: { id } } }),
    () => {
      setDone(t('passkey.removed'))
      refresh()
    },
  )
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = e.currentTarget
    setDone('')
    void add.run(String(new FormData(form).get('name')).trim()).then((r) => r && form.reset())
  }

  const items = list.data?.items ?? []
  const total = list.data?.total ?? 0
  const off = on === false || passkeysOff(list.error)
  return (
    <section aria-labelledby="passkeys" className="panel">
      <h2 id="passkeys">{t('passkey.title')}</h2>
      {off ? (
        <PasskeysOff />
      ) : (
        <>
          <List
            what={t('passkey.yours')}
            error={list.error ?? add.error ?? rename.error ?? remove.error}
            showError={(error) => <PasskeyError error={error} />}
            pending={list.isPending}
            items={items}
            empty={list.error ? null : t('passkey.noneYet')}
          >
            {(passkeys) => (
              <ul className="list">
                {passkeys.map((p) => (
                  <Item key={p.id} passkey={p} rename={rename.run} remove={remove.run} />
                ))}
              </ul>
            )}
          </List>
          {total > items.length && (
            <p className="muted">{t('passkey.newestOfYours', { shown: items.length, count: total })}</p>
          )}
          <p role="status">{done}</p>
          {!list.error && !list.isPending && (
            <form className="row" onSubmit={submit}>
              <label>
                {t('passkey.newPasskeyName')}
                <input name="name" maxLength={64} />
              </label>
              <FormFooter submit={t('passkey.add')} pending={add.pending} layout="inline" />
            </form>
          )}
        </>
      )}
    </section>
  )
}
