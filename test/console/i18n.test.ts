import t from 'tap'
import { en } from '../../console/src/i18n/en/index.js'
import { ptBR } from '../../console/src/i18n/pt-BR/index.js'
import { t as tr } from '../../console/src/i18n/index.js'
import { addWords, localeOf, lookup, setLocale, type Entry } from '../../console/src/ui/i18n.js'
import { durationMessage } from '../../console/src/lib/durations.js'
import { policyWords } from '../../console/src/lib/password-policy.js'
import { validate } from '../../console/src/lib/schema.js'

// The catalogue (issue 44): pt-BR has every key of en (the type says so: WordsOf<typeof en>; this says it at
// run time too), no text is empty, the placeholders match; the lookup's params and plurals.

const texts = (entry: Entry) => (typeof entry === 'string' ? [entry] : [entry.one, entry.other])
const placeholders = (entry: Entry) =>
  [...new Set(texts(entry).flatMap((s) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1])))].sort()

t.test('pt-BR: every key of en, none empty, the same placeholders and kinds', async (t) => {
  const source = en as Record<string, Entry>
  const target = ptBR as Record<string, Entry>
  t.same(Object.keys(target).sort(), Object.keys(source).sort(), 'the same keys')
  t.ok(Object.keys(source).length > 100, `${Object.keys(source).length} keys`)
  const problems: string[] = []
  for (const [key, entry] of Object.entries(source)) {
    const other = target[key]
    if (other === undefined) continue
    if (typeof other !== typeof entry) problems.push(`${key}: a plural in one language only`)
    for (const text of [...texts(entry), ...texts(other)]) if (!text.trim()) problems.push(`${key}: empty`)
    // Why only the placeholders' set: a plural's one form may leave out {count} ("um usuário").
    if (placeholders(entry).join() !== placeholders(other).join()) {
      problems.push(`${key}: {${placeholders(entry).join('} {')}} vs {${placeholders(other).join('} {')}}`)
    }
  }
  t.same(problems, [])
})

t.test('the browser’s language: any Portuguese is pt-BR, anything else English', async (t) => {
  t.equal(localeOf(['pt-BR', 'en']), 'pt-BR')
  t.equal(localeOf(['pt-PT']), 'pt-BR')
  t.equal(localeOf(['pt']), 'pt-BR')
  t.equal(localeOf(['en-GB', 'pt-BR']), 'en', 'the first language the console speaks wins')
  t.equal(localeOf(['de-DE', 'pt-BR']), 'pt-BR', 'one it does not speak is passed over')
  t.equal(localeOf(['fr']), 'en')
  t.equal(localeOf([]), 'en')
})

t.test('t(): params, plurals, numbers in the language, English when a key is missing', async (t) => {
  t.teardown(() => setLocale('en'))
  t.equal(tr('users.count', { count: 1 }), '1 user')
  t.equal(tr('users.count', { count: 0 }), '0 users')
  t.equal(tr('users.count', { count: 1200 }), '1,200 users')
  t.equal(tr('users.deleted', { name: 'ana' }), 'User ana deleted.')
  t.equal(tr('kit.range', { first: 1, last: 20, total: 45 }), '1–20 of 45')
  addWords('pt-BR', ptBR)
  setLocale('pt-BR')
  t.equal(tr('users.count', { count: 1 }), '1 usuário')
  t.equal(
    tr('users.count', { count: 0 }),
    '0 usuário',
    'zero takes the one form in Portuguese (CLDR, as Intl.PluralRules)',
  )
  t.equal(tr('users.count', { count: 1200 }), '1.200 usuários')
  t.equal(tr('users.deleted', { name: 'ana' }), 'Usuário ana excluído.')
  t.equal(lookup('no.such.key'), 'no.such.key', 'an unknown key shows itself, not nothing')
  addWords('pt-BR', { 'kit.copy': '' } as Record<string, Entry>)
  t.equal(lookup('kit.copy'), '', 'a key the language has is its own, even empty (the test above forbids it)')
})

t.test('lib/ in Portuguese: the password rule, a form’s bound in time, the service’s too', async (t) => {
  t.teardown(() => setLocale('en'))
  addWords('pt-BR', ptBR)
  setLocale('pt-BR')
  t.equal(
    policyWords({ minLength: 10, requireDigit: true, requireSymbol: true, rejectCommon: true }),
    'Pelo menos 10 caracteres, com um dígito e um símbolo; não pode ser uma senha comum. ' +
      'No máximo 72 bytes — cerca de 72 letras, menos com acentos ou emoji.',
  )
  const [issue] = validate({ type: 'integer', minimum: 60 }, 30)
  t.equal(issue?.message, 'deve ser pelo menos 60', 'the form’s own check, in Portuguese')
  t.equal(durationMessage(issue!.message, 60), 'deve ser de pelo menos 1 minuto', 'said in the field’s unit')
  t.equal(
    durationMessage('must be <= 86400', 3600),
    'deve ser de no máximo 24 horas',
    'Ajv’s words from the service',
  )
  t.equal(
    durationMessage('deve ser um número inteiro', 60),
    'deve ser um número inteiro',
    'any other as it came',
  )
})
