import { CopyButton } from './CopyButton'

/**
 * A key's value (or, with `label`, another secret's: an application's), shown once (the service never
 * answers it again), with a button that copies it.
 */
export function ShownOnce({
  name,
  value,
  onDone,
  label = 'Key value',
}: {
  name: string
  value: string
  onDone: () => void
  label?: string
}) {
  return (
    <section className="callout" aria-labelledby="key-value">
      <h2 id="key-value">The value of “{name}”</h2>
      <p>Store it now: it is shown only this once.</p>
      <p>
        <label>
          {label}
          <input readOnly value={value} className="mono" onFocus={(e) => e.currentTarget.select()} />
        </label>
      </p>
      <div className="row">
        <CopyButton text={value} />
        <button type="button" onClick={onDone}>
          I have stored it
        </button>
      </div>
    </section>
  )
}
