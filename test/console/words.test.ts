import t from 'tap'
import document from '../../generated/openapi.json' with { type: 'json' }
import { passwordTooLong, policyWords } from '../../console/src/lib/password-policy.js'
import { t as tr } from '../../console/src/i18n/index.js'
import { changedOf, keyIdsOf, sentenceOf, userIdsOf, type Names } from '../../console/src/lib/audit-words.js'
import { durationMessage, durationWords, unitOf } from '../../console/src/lib/durations.js'
import { bodyIssuesOf, validate, type JsonSchema } from '../../console/src/lib/schema.js'
import { resolveSchema } from '../../console/vite.config.js'
import { TesseraError } from '../../clients/typescript/src/index.js'

// The console's words for a person (issue 44): password rules, counts, audit events with the names of people
// and Client Keys, durations in the unit a field shows. Pure functions of console/src/lib, no browser.

const ANA = '11111111-1111-4111-8111-111111111111'
const KEY = '33333333-3333-4333-8333-333333333333'
const GONE = '44444444-4444-4444-8444-444444444444'

const BYTES = 'At most 72 bytes — about 72 letters, fewer with accents or emoji.'

t.test('password policy and counts in words', async (t) => {
  t.equal(policyWords({ minLength: 12 }), `At least 12 characters. ${BYTES}`)
  t.equal(
    policyWords({
      minLength: 10,
      requireDigit: true,
      requireSymbol: true,
      requireUppercase: true,
      rejectCommon: true,
    }),
    `At least 10 characters, with a capital letter, a digit and a symbol; not a common password. ${BYTES}`,
  )
  t.equal(policyWords({ requireLowercase: true }), `At least 8 characters, with a small letter. ${BYTES}`)
  t.equal(tr('users.count', { count: 1 }), '1 user')
  t.equal(tr('users.count', { count: 0 }), '0 users')
  t.equal(tr('audit.count', { count: 1200 }), '1,200 events')
})

t.test('passwordTooLong: counts UTF-8 bytes, as bcrypt does, not letters', async (t) => {
  t.equal(passwordTooLong('a'.repeat(72)), null, '72 plain letters fit')
  t.equal(
    passwordTooLong('a'.repeat(73)),
    'This password is too long (73 bytes): at most 72 bytes — about 72 letters, fewer with accents or emoji.',
  )
  t.equal(passwordTooLong('é'.repeat(36)), null, '36 accented letters are 72 bytes')
  t.match(passwordTooLong('é'.repeat(37)), /\(74 bytes\)/, '37 are too many')
  t.match(passwordTooLong('🔑'.repeat(19)), /\(76 bytes\)/, 'an emoji is 4 bytes')
})

const row = (over: Record<string, unknown>) =>
  ({
    id: 'r',
    tenant_id: 't',
    user_id: null,
    action: 'LOGIN',
    success: true,
    error_message: null,
    ip_address: null,
    user_agent: null,
    created_at: '2026-12-03T00:00:00Z',
    request_id: null,
    actor_type: null,
    actor_id: null,
    metadata: {},
    ...over,
  }) as Parameters<typeof sentenceOf>[0]

/** Names as the screen gives them once its requests are answered; `keys: undefined` while they are not. */
const namesWith = (keys?: Map<string, string>): Names => ({
  user: (id) => (id === ANA ? 'ana@acme.test' : `user ${id}`),
  role: (id) => (id === 'r1' ? 'ops' : undefined),
  key: (id) => (keys ? (keys.get(id) ?? null) : undefined),
})
const names = namesWith(new Map([[KEY, 'billing backend']]))

t.test('audit events in words: people and roles', async (t) => {
  t.equal(sentenceOf(row({ user_id: ANA }), names), 'ana@acme.test signed in')
  t.equal(sentenceOf(row({ success: false }), names), 'An unknown user failed to sign in')
  const created = row({
    action: 'ROLE_CREATE',
    actor_type: 'user',
    actor_id: ANA,
    metadata: { target: { type: 'role', id: 'r1' }, changed: ['name'] },
  })
  t.equal(sentenceOf(created, names), 'ana@acme.test created the role ops')
  t.same(changedOf(created), ['name'])
  t.same(
    userIdsOf([
      created,
      row({ user_id: '22222222-2222-4222-8222-222222222222' }),
      row({ user_id: 'not-a-uuid' }),
    ]),
    [ANA, '22222222-2222-4222-8222-222222222222'],
    'UUIDs only, lowercased',
  )
  t.equal(
    sentenceOf(
      row({
        action: 'USER_UPDATE',
        actor_type: 'user',
        actor_id: ANA,
        success: false,
        metadata: { target: { type: 'user', id: '99999999-9999-4999-8999-999999999999' } },
      }),
      names,
    ),
    'ana@acme.test was refused changing user 99999999-9999-4999-8999-999999999999',
  )
})

t.test('audit events in words: Client Keys by name, a deleted one as such', async (t) => {
  const byKey = (id: string, over: Record<string, unknown> = {}) =>
    row({
      action: 'ROLE_DELETE',
      actor_type: 'client_key',
      actor_id: id,
      metadata: { target: { type: 'role', id: 'gone' } },
      ...over,
    })
  t.equal(sentenceOf(byKey(KEY), names), 'The Client Key “billing backend” deleted a role')
  t.equal(sentenceOf(byKey(KEY.toUpperCase()), names), 'The Client Key “billing backend” deleted a role')
  t.equal(sentenceOf(byKey(GONE), names), 'A deleted Client Key deleted a role')
  t.equal(sentenceOf(byKey(KEY), namesWith()), 'A Client Key deleted a role', 'while the names load')
  t.equal(
    sentenceOf(
      byKey(GONE, { action: 'TENANT_UPDATE', metadata: { target: { type: 'tenant', id: 't' } } }),
      names,
    ),
    'A Client Key of the platform changed a tenant',
    'a key the tenant cannot list acting on the tenant: the platform’s (section 25: both logs)',
  )
  const issued = row({
    action: 'CLIENT_KEY_CREATE',
    actor_type: 'user',
    actor_id: ANA,
    metadata: { target: { type: 'client_key', id: KEY } },
  })
  t.equal(sentenceOf(issued, names), 'ana@acme.test issued the Client Key “billing backend”')
  t.equal(
    sentenceOf(
      row({
        action: 'CLIENT_KEY_REVOKE',
        actor_type: 'client_key',
        actor_id: KEY,
        success: false,
        metadata: { target: { type: 'client_key', id: GONE } },
      }),
      names,
    ),
    'The Client Key “billing backend” was refused revoking a deleted Client Key',
  )
  t.equal(sentenceOf(issued, namesWith()), 'ana@acme.test issued a Client Key', 'while the names load')
  t.equal(
    sentenceOf(
      row({
        action: 'CLIENT_KEY_CREATE',
        actor_type: 'user',
        actor_id: ANA,
        metadata: { target: { type: 'client_key', id: GONE }, changed: ['name', 'scopes', 'tenantId'] },
      }),
      names,
    ),
    'ana@acme.test issued a Client Key of another tenant',
    'the platform issuing a key in another tenant: not listed here, yet not deleted',
  )
  t.same(
    keyIdsOf([issued, byKey(KEY.toUpperCase()), byKey('k'), row({ user_id: ANA }), byKey(GONE)]),
    [KEY, GONE],
    'actors and targets that are keys; UUIDs only, lowercased, once each',
  )
})

t.test('durations: a bound in seconds said in the unit the field shows', async (t) => {
  t.equal(unitOf(900), 60)
  t.equal(unitOf(86_400), 86_400)
  t.equal(unitOf(90), 1)
  t.equal(durationWords(60), '1 minute')
  t.equal(durationWords(31_536_000), '365 days')
  t.equal(durationWords(86_400, 3_600), '24 hours', 'in the field’s unit when whole')
  t.equal(durationWords(60, 3_600), '1 minute', 'else the largest unit that is')
  t.equal(durationWords(0, 60), '0 seconds')
  t.equal(durationMessage('must be at least 60', 60), 'must be at least 1 minute', 'the form’s words')
  t.equal(durationMessage('must be >= 60', 60), 'must be at least 1 minute', 'the service’s (Ajv)')
  t.equal(durationMessage('must be <= 86400', 60), 'must be at most 1,440 minutes')
  t.equal(durationMessage('must be <= 86400'), 'must be at most 1 day', 'no unit known: the largest')
  t.equal(durationMessage('must be > 0', 1), 'must be more than 0 seconds')
  t.equal(durationMessage('must be a whole number', 60), 'must be a whole number', 'any other as it came')
  // The form's own check against the document, then said in time.
  const schema = resolveSchema(document as never, 'AuthConfigPatch') as JsonSchema
  const [issue] = validate(schema, { accessTokenExpiresIn: 30 })
  t.same(issue, { path: '/accessTokenExpiresIn', message: 'must be at least 60' })
  t.equal(durationMessage(issue!.message, 60), 'must be at least 1 minute')
})

t.test('bodyIssuesOf: the service’s VALIDATION_ERROR of a body, by the form’s field paths', async (t) => {
  const refused = new TesseraError({
    status: 400,
    code: 'VALIDATION_ERROR',
    message: 'Request validation failed',
    details: [
      { path: 'body.lockout.maxSeconds', message: 'must be <= 604800' },
      { path: 'query.limit', message: 'must be <= 100' },
    ],
  })
  t.same(bodyIssuesOf(refused), [{ path: '/lockout/maxSeconds', message: 'must be <= 604800' }])
  t.same(
    bodyIssuesOf(new TesseraError({ status: 403, code: 'FORBIDDEN', message: 'no' })),
    [],
    'another code: none',
  )
  t.same(bodyIssuesOf(new Error('offline')), [], 'not the service’s answer: none')
})
