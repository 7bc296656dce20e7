import { CopyButton } from '../ui/CopyButton'
import { t } from '../i18n'

/** The recovery codes as a text file: one per line, with a line saying what they are. */
function fileOf(codes: readonly string[], tenant: string): string {
  return `${t('codes.file', { tenant })}\n${codes.join('\n')}\n`
}

/** Saves the codes as recovery-codes.txt, from the page itself (no request). */
function download(codes: readonly string[], tenant: string): void {
  const url = URL.createObjectURL(new Blob([fileOf(codes, tenant)], { type: 'text/plain' }))
  const a = document.createElement('a')
  a.href = url
  a.download = `recovery-codes-${tenant}.txt`
  a.click()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

/** Recovery codes shown once, with Copy and Download, so that they are kept before the page is left. */
export function RecoveryCodes({ codes, tenant }: { codes: readonly string[]; tenant: string }) {
  return (
    <>
      <ul className="codes" aria-label={t('signIn.recovery')}>
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <div className="row">
        <CopyButton text={codes.join('\n')} label={t('codes.copy')} />
        <button type="button" onClick={() => download(codes, tenant)}>
          {t('codes.download')}
        </button>
      </div>
    </>
  )
}
