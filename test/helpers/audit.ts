import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import type { AuditAction } from '../../src/db/database.js'
import { auditRows } from './fixtures.js'

/** Asserts that `rows` holds exactly one row and that the row matches `expected` (tap's t.match). */
export function matchOne(t: Test, rows: readonly object[], expected: object): void {
  t.equal(rows.length, 1)
  t.match(rows[0], expected)
}

/** Asserts that the tenant holds exactly one audit row of the action and that it matches `expected`. */
export async function oneAuditRow(
  t: Test,
  app: FastifyInstance,
  tenantId: string,
  action: AuditAction,
  expected: object,
): Promise<void> {
  matchOne(t, await auditRows(app, tenantId, action), expected)
}

/** The actor fields of an audit row written by a user. */
export const byUser = (id: string) => ({ actor_type: 'user', actor_id: id }) as const

/** The actor fields of an audit row written by a Client Key. */
export const byKey = (id: string) => ({ actor_type: 'client_key', actor_id: id }) as const

/** The fields of a user's audit row about itself: the user is both the actor and the subject. */
export const bySelf = (id: string) => ({ ...byUser(id), user_id: id })
