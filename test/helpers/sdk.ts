import { TesseraError } from '../../clients/typescript/src/index.js'

/**
 * The TesseraError a call of the SDK rejects with; rethrows any other error, and throws when the promise
 * resolves (`what` names what resolved).
 */
export async function rejection(
  promise: Promise<unknown>,
  what = 'the call succeeded',
): Promise<TesseraError> {
  try {
    await promise
  } catch (err) {
    if (err instanceof TesseraError) return err
    throw err
  }
  throw new Error(`${what}; a TesseraError was expected`)
}
