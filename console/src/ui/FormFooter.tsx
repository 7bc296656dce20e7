import type { ReactNode } from 'react'
import { ErrorBox } from './feedback'
import { kt } from './words'

/**
 * The end of a form: the act's error, the submit button (off while the act is pending), "Cancel" when the
 * form can be closed, other buttons (`children`), and the live status of what was done (given even while
 * empty, the region is in the page before its first words, so a screen reader hears them).
 * - `row` (the default): the buttons in a row of their own, the status after them;
 * - `inline`: the buttons and the status in the form's own row (a form of one field and its button);
 * - `stacked`: the form of a single act, whose button takes the form's width, the status above it.
 */
export function FormFooter(props: {
  /** The submit button's words; none: a form that the reader may not send. */
  submit?: string
  error?: unknown
  pending?: boolean
  onCancel?: () => void
  status?: string
  layout?: 'row' | 'inline' | 'stacked'
  children?: ReactNode
}) {
  const { layout = 'row' } = props
  const submit = props.submit !== undefined && (
    <button type="submit" disabled={props.pending}>
      {props.submit}
    </button>
  )
  if (layout === 'stacked') {
    return (
      <>
        <ErrorBox error={props.error} />
        {props.status !== undefined && <p role="status">{props.status}</p>}
        {submit}
        {props.children}
      </>
    )
  }
  const buttons = (
    <>
      {submit}
      {props.onCancel && (
        <button type="button" onClick={props.onCancel}>
          {kt('kit.cancel')}
        </button>
      )}
      {props.children}
      {props.status !== undefined && <span role="status">{props.status}</span>}
    </>
  )
  return (
    <>
      <ErrorBox error={props.error} />
      {layout === 'row' ? <div className="row">{buttons}</div> : buttons}
    </>
  )
}
