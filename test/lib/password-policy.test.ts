import t from 'tap'
import {
  checkPassword,
  defaultPasswordPolicy,
  isCommonPassword,
  preloadCommonPasswords,
  type PasswordPolicy,
} from '../../src/lib/password-policy.js'

const none: PasswordPolicy = {
  minLength: 8,
  requireUppercase: false,
  requireLowercase: false,
  requireDigit: false,
  requireSymbol: false,
  rejectCommon: false,
}
const all: PasswordPolicy = {
  minLength: 12,
  requireUppercase: true,
  requireLowercase: true,
  requireDigit: true,
  requireSymbol: true,
  rejectCommon: true,
}

t.test('defaults are those PasswordPolicy states in the document', async (t) => {
  t.same(defaultPasswordPolicy, { ...none, rejectCommon: true })
  t.ok(Object.isFrozen(defaultPasswordPolicy))
})

t.test('a password meeting every rule passes', async (t) => {
  t.same(checkPassword('Quartz-Lantern-42', all), [])
})

t.test('every failed rule is listed, in the document’s order', async (t) => {
  t.same(checkPassword('', all), [
    'minLength',
    'requireUppercase',
    'requireLowercase',
    'requireDigit',
    'requireSymbol',
  ])
  t.same(checkPassword('PASSWORD', { ...all, minLength: 8 }), [
    'requireLowercase',
    'requireDigit',
    'requireSymbol',
    'rejectCommon',
  ])
  t.same(checkPassword('ä'.repeat(40), all), [
    'maxBytes',
    'requireUppercase',
    'requireDigit',
    'requireSymbol',
  ])
})

t.test('minLength counts code points, not UTF-16 units or bytes', async (t) => {
  t.same(checkPassword('🙂🙂🙂🙂🙂🙂🙂', none), ['minLength'], '7 emoji (14 UTF-16 units) are 7 characters')
  t.same(checkPassword('🙂🙂🙂🙂🙂🙂🙂🙂', none), [], '8 emoji pass minLength 8')
  t.same(checkPassword('abcdefg', none), ['minLength'])
  t.same(checkPassword('abcdefgh', none), [])
})

t.test('maxBytes: 72 UTF-8 bytes is the boundary, with multi-byte characters', async (t) => {
  t.same(checkPassword('a'.repeat(72), none), [], '72 ASCII bytes')
  t.same(checkPassword('a'.repeat(73), none), ['maxBytes'], '73 ASCII bytes')
  t.same(checkPassword('é'.repeat(36), none), [], '36 two-byte characters = 72 bytes')
  t.same(checkPassword('é'.repeat(36) + 'a', none), ['maxBytes'], '73 bytes')
  t.same(checkPassword('🙂'.repeat(18), none), [], '18 four-byte characters = 72 bytes')
  t.same(checkPassword('🙂'.repeat(18) + 'a', none), ['maxBytes'], '19 characters but 73 bytes')
  t.same(checkPassword('日'.repeat(24) + 'a', { ...none, minLength: 72 }), ['minLength', 'maxBytes'])
})

t.test('character classes use Unicode properties', async (t) => {
  const only = (rule: keyof PasswordPolicy): PasswordPolicy => ({ ...none, [rule]: true })
  t.same(checkPassword('ÉCOLEÉTÉ', only('requireUppercase')), [], 'accented uppercase')
  t.same(checkPassword('école-été', only('requireUppercase')), ['requireUppercase'])
  t.same(checkPassword('ÉCOLE-ÉTÉ', only('requireLowercase')), ['requireLowercase'])
  t.same(checkPassword('ßtraßen-x', only('requireLowercase')), [])
  t.same(checkPassword('abcdefgh٣', only('requireDigit')), [], 'Arabic-Indic digit three')
  t.same(checkPassword('abcdefgh', only('requireDigit')), ['requireDigit'])
  t.same(checkPassword('abcdefgh!', only('requireSymbol')), [], 'punctuation')
  t.same(checkPassword('abcdefgh€', only('requireSymbol')), [], 'currency symbol')
  t.same(checkPassword('abcdefgh🙂', only('requireSymbol')), [], 'emoji')
  t.same(checkPassword('abcd efgh', only('requireSymbol')), ['requireSymbol'], 'a space is not a symbol')
  t.same(
    checkPassword('cafe\u0301abcd', only('requireSymbol')),
    ['requireSymbol'],
    'a combining mark is not a symbol',
  )
})

t.test('rejectCommon uses the shipped list, case-insensitively', async (t) => {
  t.ok(preloadCommonPasswords() >= 10_000, 'at least 10,000 entries')
  t.ok(isCommonPassword('password'))
  t.ok(isCommonPassword('PassWord'))
  t.ok(isCommonPassword('qwertyuiop'))
  t.ok(isCommonPassword('123456789'))
  t.notOk(isCommonPassword('Quartz-Lantern-42'))
  t.notOk(isCommonPassword('# Top 10,000'), 'the provenance comment is not an entry')
  t.same(checkPassword('Football1', { ...none, rejectCommon: true }), ['rejectCommon'])
  t.same(checkPassword('Football1', none), [], 'off when the policy says so')
})
