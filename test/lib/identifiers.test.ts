import t from 'tap'
import {
  classifyIdentifier,
  isValidCnpj,
  isValidCpf,
  normalizeCpfCnpj,
  normalizeEmail,
  normalizeUsername,
} from '../../src/lib/identifiers.js'

t.test('CPF check digits', async (t) => {
  for (const valid of ['529.982.247-25', '52998224725', '111.444.777-35', '123.456.789-09']) {
    t.ok(isValidCpf(valid), `${valid} is valid`)
  }
  for (const invalid of [
    '529.982.247-24',
    '529.982.247-15',
    '111.111.111-11',
    '000.000.000-00',
    '5299822472',
    '',
  ]) {
    t.notOk(isValidCpf(invalid), `${invalid || '(empty)'} is invalid`)
  }
})

t.test('CNPJ check digits', async (t) => {
  for (const valid of ['11.222.333/0001-81', '11222333000181', '11.444.777/0001-61']) {
    t.ok(isValidCnpj(valid), `${valid} is valid`)
  }
  for (const invalid of [
    '11.222.333/0001-82',
    '11.222.333/0001-71',
    '00.000.000/0000-00',
    '11.222.333/0001-8',
  ]) {
    t.notOk(isValidCnpj(invalid), `${invalid} is invalid`)
  }
})

t.test('normalizeCpfCnpj returns bare digits only when valid', async (t) => {
  t.equal(normalizeCpfCnpj('529.982.247-25'), '52998224725')
  t.equal(normalizeCpfCnpj(' 11.222.333 / 0001-81 '), '11222333000181')
  t.equal(normalizeCpfCnpj('529.982.247-24'), null)
  t.equal(normalizeCpfCnpj('1234567890123'), null, '13 digits is neither')
  t.equal(normalizeCpfCnpj('529.982.247-2a'), null, 'letters are not stripped')
})

t.test('normalizeEmail trims and lowercases plausible addresses only', async (t) => {
  t.equal(normalizeEmail('  Alice@Example.COM\t'), 'alice@example.com')
  t.equal(normalizeEmail('a@b'), 'a@b')
  for (const bad of [
    'alice',
    '@example.com',
    'alice@',
    'a@b@c',
    'al ice@example.com',
    'a\u0000@b',
    'x'.repeat(250) + '@b.cd',
  ]) {
    t.equal(normalizeEmail(bad), null, JSON.stringify(bad.slice(0, 20)))
  }
})

t.test('normalizeUsername', async (t) => {
  t.equal(normalizeUsername('Bob.Smith-1_x'), 'bob.smith-1_x')
  t.equal(normalizeUsername(' abc '), 'abc', 'trimmed')
  t.equal(normalizeUsername('a'.repeat(64)), 'a'.repeat(64))
  t.equal(normalizeUsername('a'.repeat(65)), null, 'too long')
  t.equal(normalizeUsername('ab'), null, 'too short')
  t.equal(normalizeUsername('12345'), null, 'all digits')
  t.equal(normalizeUsername('123.456-78'), null, 'digits and separators would be read as cpf_cnpj at login')
  t.equal(normalizeUsername('...'), null, 'separators only')
  t.equal(normalizeUsername('1_2'), '1_2', 'an underscore makes it a username')
  t.equal(normalizeUsername('jösé'), null, 'non-ASCII letters')
  t.equal(normalizeUsername('a b c'), null, 'inner space')
})

t.test('classifyIdentifier', async (t) => {
  const cases: Array<[string, ReturnType<typeof classifyIdentifier>]> = [
    ['  Alice@Example.com ', { kind: 'email', value: 'alice@example.com' }],
    ['bad@', null],
    ['529.982.247-25', { kind: 'cpf_cnpj', value: '52998224725' }],
    ['529 982 247 25', { kind: 'cpf_cnpj', value: '52998224725' }],
    ['11.222.333/0001-81', { kind: 'cpf_cnpj', value: '11222333000181' }],
    ['529.982.247-24', null],
    ['12345', null],
    ['123456789012', null],
    ['Bob_Smith', { kind: 'username', value: 'bob_smith' }],
    ['bo', null],
    ['bob!', null],
    ['', null],
    ['   ', null],
    ['x'.repeat(300) + '@example.com', null],
  ]
  for (const [raw, expected] of cases)
    t.same(classifyIdentifier(raw), expected, JSON.stringify(raw.slice(0, 30)))
})
