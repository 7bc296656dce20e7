import { useState } from 'react'
import { kt } from './words'

/**
 * A button whose act needs a second, explicit click: the first shows what will happen and the confirming
 * button in its place (in the page, reachable by keyboard, unlike window.confirm).
 */
export function ConfirmButton(props: {
  label: string
  confirm: string
  onConfirm: () => void
  warning?: string
  /** False for an act that removes or ends nothing (a rotation, a mail sent): no danger colours. */
  danger?: boolean
}) {
  const [asking, setAsking] = useState(false)
  const danger = props.danger ?? true
  if (!asking) {
    return (
      <button type="button" className={danger ? 'danger-quiet' : undefined} onClick={() => setAsking(true)}>
        {props.label}
      </button>
    )
  }
  return (
    <span className="confirm" role="group" aria-label={props.label}>
      <span>{props.warning ?? kt('kit.sure')}</span>
      <button
        type="button"
        className={danger ? 'danger' : 'primary'}
        autoFocus
        onClick={() => {
          setAsking(false)
          props.onConfirm()
        }}
      >
        {props.confirm}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        {kt('kit.cancel')}
      </button>
    </span>
  )
}
