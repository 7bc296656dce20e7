import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { login as loginCall } from '../helpers/call.js'
import { createTenant, createUser, PASSWORD } from '../helpers/fixtures.js'

// Timing parity without timing: every failed login, whatever the reason, costs exactly one bcrypt
// cost-12 compare (a real one or the dummy), and answers the same bytes. Counting the compares is
// deterministic on a noisy machine, where a stopwatch is not.
t.test('login: unknown and known identifiers cost the same (one compare each)', async (t) => {
  // At production's cost: the parity is of what a real login spends.
  const app = await buildTestApp(t, {}, { passwordCost: 12 })
  const tenant = await createTenant(app, { loginIdentifiers: ['email'] })
  const user = await createUser(app, tenant)
  const long = await createUser(app, tenant)
  const hasher = app.ctx.hasher as {
    verify: typeof app.ctx.hasher.verify
    dummyVerify: typeof app.ctx.hasher.dummyVerify
  }
  let compares = 0
  const verify = hasher.verify.bind(hasher)
  const dummy = hasher.dummyVerify.bind(hasher)
  hasher.verify = (...args) => {
    compares++
    return verify(...args)
  }
  hasher.dummyVerify = (...args) => {
    compares++
    return dummy(...args)
  }
  const login = async (identifier: string, password: string) => {
    compares = 0
    const res = await loginCall(app, tenant.code, identifier, password)
    return { status: res.status, body: res.raw, compares }
  }
  const cases: [string, string, string][] = [
    ['unknown identifier', 'nobody@example.test', PASSWORD],
    ['wrong password', user.email, 'Wrong-password-1'],
    ['identifier kind not enabled', 'some_username', PASSWORD],
    ['password over 72 bytes, known user', long.email, 'x'.repeat(73)],
    ['password over 72 bytes, unknown user', 'nobody@example.test', 'x'.repeat(73)],
  ]
  const answers = new Set<string>()
  for (const [name, identifier, password] of cases) {
    const r = await login(identifier, password)
    t.equal(r.status, 401, name)
    t.equal(r.compares, 1, `${name}: exactly one bcrypt compare`)
    answers.add(r.body)
  }
  t.equal(answers.size, 1, 'every failure answers the same bytes')
  const ok = await login(user.email, PASSWORD)
  t.equal(ok.status, 200)
  t.equal(ok.compares, 1, 'a success costs the same one compare')
})
