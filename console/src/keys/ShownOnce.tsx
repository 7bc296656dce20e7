import { useState } from 'react'

/** A key's value, shown once (the service never answers it again), with a button that copies it. */
export function ShownOnce({ name, value, onDone }: { name: string; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState('')
  const copy = () =>
    navigator.clipboard.writeText(value).then(
      () => setCopied('Copied.'),
      () => setCopied('Could not copy: select the value and copy it by hand.'),
    )
  return (
    <section className="callout" aria-labelledby="key-value">
      <h2 id="key-value">The value of “{name}”</h2>
      <p>Store it now: it is shown only this once.</p>
      <p>
        <label>
          Key value
          <input readOnly value={value} className="mono" onFocus={(e) => e.currentTarget.select()} />
        </label>
      </p>
      <div className="row">
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" onClick={onDone}>
          I have stored it
        </button>
      </div>
      <p role="status">{copied}</p>
    </section>
  )
}
