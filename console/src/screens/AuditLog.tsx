import { useState, type FormEvent } from 'react'
import { useQuery } from '@tanstack/react-query'
import { auditActions } from 'virtual:tessera-schemas'
import type { components } from '@tessera/client'
import { tessera } from '../api'
import { toCsv } from '../lib/csv'
import { useAction } from '../action'
import { FormFooter } from '../ui/FormFooter'
import { when } from '../ui/format'
import { List, usePage } from '../ui/List'
import { changedOf, keyWords, sentenceOf } from '../lib/audit-words'
import { useNames } from '../audit/names'
import { ErrorBox, PlainError } from '../ui/feedback'
import { t } from '../i18n'

type Row = components['schemas']['AuditRow']
type Filters = {
  action?: Row['action']
  success?: boolean
  since?: string
  userId?: string
  ip?: string
}

const LIMIT = 50
/** The most rows one export reads (20 pages of the API's largest page). */
const EXPORT_MAX = 10_000
const COLUMNS = [
  'created_at',
  'action',
  'success',
  'user_id',
  'ip_address',
  'user_agent',
  'error_message',
  'actor_type',
  'actor_id',
  'request_id',
  'metadata',
] as const

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The filters of the form; a user given by email (or username) is looked up first, by one request. */
async function filtersOf(form: HTMLFormElement): Promise<Filters> {
  const f = new FormData(form)
  const text = (name: string) => String(f.get(name) ?? '').trim()
  const success = text('success')
  const who = text('user')
  let userId: string | undefined
  if (UUID.test(who)) userId = who
  else if (who) {
    const found = await tessera.GET('/api/v1/users', { params: { query: { q: who, limit: 100 } } })
    const plain = (v: string | null | undefined) => (v ?? '').toLowerCase().replace(/[.\-/]/g, '')
    const exact = found.items.filter((u) =>
      [u.email, u.username, u.cpf_cnpj].some((v) => plain(v) === plain(who)),
    )
    const match = exact.length === 1 ? exact[0] : found.items.length === 1 ? found.items[0] : undefined
    if (!match)
      throw new PlainError(found.items.length ? t('audit.many', { who }) : t('audit.noUser', { who }))
    userId = match.id
  }
  return {
    ...(text('action') ? { action: text('action') as Row['action'] } : {}),
    ...(success ? { success: success === 'true' } : {}),
    ...(text('since') ? { since: text('since') } : {}),
    ...(userId ? { userId } : {}),
    ...(text('ip') ? { ip: text('ip') } : {}),
  }
}

/** Every filtered row (page after page, up to EXPORT_MAX) as a CSV download. */
async function exportCsv(filters: Filters): Promise<number> {
  const rows: Row[] = []
  for (let offset = 0; offset < EXPORT_MAX; offset += 500) {
    const page = await tessera.GET('/api/v1/auth-logs', {
      params: { query: { ...filters, limit: 500, offset } },
    })
    rows.push(...page.items)
    if (offset + page.items.length >= page.total || page.items.length === 0) break
  }
  const url = URL.createObjectURL(new Blob([toCsv(rows, COLUMNS)], { type: 'text/csv' }))
  const a = document.createElement('a')
  a.href = url
  a.download = `audit-log-${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.csv`
  a.click()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
  return rows.length
}

export function AuditLog() {
  const [filters, setFilters] = useState<Filters>({})
  const [filterError, setFilterError] = useState<unknown>(null)
  const page = usePage(LIMIT)
  const [open, setOpen] = useState<string | null>(null)
  const [exported, setExported] = useState('')
  const rows = useQuery({
    queryKey: ['auth-logs', filters, page.offset],
    queryFn: () =>
      tessera.GET('/api/v1/auth-logs', {
        params: { query: { ...filters, limit: page.limit, offset: page.offset } },
      }),
  })
  const exporting = useAction(exportCsv, (n) => setExported(t('audit.exported', { count: n })))
  const names = useNames(rows.data?.items)
  const apply = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setFilterError(null)
    filtersOf(e.currentTarget).then((f) => {
      setFilters(f)
      page.onOffset(0)
    }, setFilterError)
  }
  return (
    <>
      <h1>{t('screen.auditLog')}</h1>
      <form onSubmit={apply} className="filters" aria-label={t('audit.filters')}>
        <label>
          {t('audit.action')}
          <select name="action">
            <option value="">{t('users.any')}</option>
            {auditActions.map((a) => (
              <option key={a}>{a}</option>
            ))}
          </select>
        </label>
        <label>
          {t('audit.outcome')}
          <select name="success">
            <option value="">{t('users.any')}</option>
            <option value="true">{t('audit.successOption')}</option>
            <option value="false">{t('audit.failureOption')}</option>
          </select>
        </label>
        <label>
          {t('audit.range')}
          <select name="since">
            <option value="">{t('audit.allTime')}</option>
            <option value="1h">{t('audit.lastHour')}</option>
            <option value="24h">{t('audit.last24')}</option>
            <option value="7d">{t('audit.last7')}</option>
            <option value="30d">{t('audit.last30')}</option>
          </select>
        </label>
        <label>
          {t('audit.userFilter')}
          <input name="user" autoComplete="off" />
        </label>
        <label>
          {t('overview.address')}
          <input name="ip" />
        </label>
        <FormFooter submit={t('audit.apply')}>
          <button type="button" onClick={() => void exporting.run(filters)} disabled={exporting.pending}>
            {t('audit.export')}
          </button>
        </FormFooter>
      </form>
      <ErrorBox error={filterError} />
      <p role="status">{exporting.pending ? t('audit.exporting') : exported}</p>
      <List
        what={t('audit.what')}
        error={rows.error ?? exporting.error}
        pending={rows.isPending}
        items={rows.data?.items}
        empty={t('audit.empty')}
        page={page}
        total={rows.data?.total}
        caption={(total) => t('audit.count', { count: total })}
        rowKey={(r) => r.id}
        columns={[
          { title: t('audit.time'), cell: (r) => when(r.created_at) },
          {
            title: t('audit.event'),
            cell: (r) => (
              <>
                {sentenceOf(r, names)}
                {changedOf(r).length > 0 && <span className="muted"> ({changedOf(r).join(', ')})</span>}
                <div className="muted">
                  <code>{r.action}</code>
                </div>
              </>
            ),
          },
          {
            title: t('audit.outcome'),
            cell: (r) =>
              r.success
                ? t('audit.success')
                : r.error_message
                  ? t('audit.failureWith', { message: r.error_message })
                  : t('audit.failure'),
          },
          { title: t('overview.address'), cell: (r) => r.ip_address ?? '—' },
          {
            title: t('audit.detail'),
            cell: (r) => (
              <>
                <button
                  type="button"
                  aria-expanded={open === r.id}
                  onClick={() => setOpen(open === r.id ? null : r.id)}
                >
                  {t('audit.details')}
                </button>
                {open === r.id && (
                  <dl className="facts">
                    <dt>{t('screen.user')}</dt>
                    <dd>{r.user_id ? `${names.user(r.user_id)} (${r.user_id})` : '—'}</dd>
                    <dt>{t('audit.actor')}</dt>
                    <dd>
                      {r.actor_type === 'user' && r.actor_id
                        ? `${names.user(r.actor_id)} (${r.actor_id})`
                        : r.actor_type === 'client_key' && r.actor_id
                          ? `${keyWords(names, r.actor_id)} (${r.actor_id})`
                          : `${r.actor_type ?? '—'} ${r.actor_id ?? ''}`}
                    </dd>
                    <dt>{t('audit.browser')}</dt>
                    <dd>{r.user_agent ?? '—'}</dd>
                    <dt>{t('audit.requestId')}</dt>
                    <dd>{r.request_id ?? '—'}</dd>
                    <dt>{t('audit.metadata')}</dt>
                    <dd>
                      <code>{JSON.stringify(r.metadata)}</code>
                    </dd>
                  </dl>
                )}
              </>
            ),
          },
        ]}
      />
    </>
  )
}
