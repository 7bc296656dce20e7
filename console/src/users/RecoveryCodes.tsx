import { CopyButton } from '../ui/CopyButton'

/** The recovery codes as a text file: one per line, with a line saying what they are. */
function fileOf(codes: readonly string[], tenant: string): string {
  return `Tessera recovery codes (tenant ${tenant}): each signs you in once without your authenticator.\n${codes.join('\n')}\n`
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
      <ul className="codes" aria-label="Recovery codes">
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <div className="row">
        <CopyButton text={codes.join('\n')} label="Copy the codes" />
        <button type="button" onClick={() => download(codes, tenant)}>
          Download the codes
        </button>
      </div>
    </>
  )
}
