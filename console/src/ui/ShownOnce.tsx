import { CopyButton } from './CopyButton'
import { kt } from './words'

/**
 * A key's value (or, with `label`, another secret's: an application's), shown once (the service never
 * answers it again), with a button that copies it.
 */
export function ShownOnce({
  name,
  value,
  onDone,
  label,
}: {
  name: string
  value: string
  onDone: () => void
  label?: string
}) {
  return (
    <section className="callout" aria-labelledby="key-value">
      <h2 id="key-value">{kt('kit.valueOf', { name })}</h2>
      <p>{kt('kit.storeNow')}</p>
      <p>
        <label>
          {label ?? kt('kit.keyValue')}
          <input readOnly value={value} className="mono" onFocus={(e) => e.currentTarget.select()} />
        </label>
      </p>
      <div className="row">
        <CopyButton text={value} />
        <button type="button" onClick={onDone}>
          {kt('kit.stored')}
        </button>
      </div>
    </section>
  )
}
