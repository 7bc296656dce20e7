import { useState } from 'react'
import { kt } from './words'

/**
 * A button that copies `text` to the clipboard, and says whether it could. `name` is the button's
 * accessible name when several copy buttons share a screen (it starts with the visible `label`).
 */
export function CopyButton({ text, label, name }: { text: string; label?: string; name?: string }) {
  const [copied, setCopied] = useState('')
  const copy = async () => {
    try {
      // Why inside the try: outside a secure context `navigator.clipboard` is undefined, and that throws.
      await navigator.clipboard.writeText(text)
      setCopied(kt('kit.copied'))
    } catch {
      setCopied(kt('kit.copyFailed'))
    }
  }
  return (
    <span className="copy">
      <button type="button" aria-label={name} onClick={() => void copy()}>
        {label ?? kt('kit.copy')}
      </button>
      <span role="status">{copied}</span>
    </span>
  )
}
