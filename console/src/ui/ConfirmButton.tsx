import { useState } from 'react'

/**
 * A button whose act needs a second, explicit click: the first shows what will happen and the confirming
 * button in its place (in the page, reachable by keyboard, unlike window.confirm).
 */
export function ConfirmButton(props: {
  label: string
  confirm: string
  onConfirm: () => void
  warning?: string
}) {
  const [asking, setAsking] = useState(false)
  if (!asking) {
    return (
      <button type="button" onClick={() => setAsking(true)}>
        {props.label}
      </button>
    )
  }
  return (
    <span className="confirm" role="group" aria-label={props.label}>
      <span>{props.warning ?? 'Are you sure?'}</span>
      <button
        type="button"
        className="danger"
        autoFocus
        onClick={() => {
          setAsking(false)
          props.onConfirm()
        }}
      >
        {props.confirm}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  )
}
