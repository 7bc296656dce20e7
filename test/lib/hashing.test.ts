import { hash as argon2Hash } from '@node-rs/argon2'
import t from 'tap'
import {
  bcryptCostOf,
  createPasswordHasher,
  DUMMY_BCRYPT_HASH,
  rawBcryptComparesPerSecond,
} from '../../src/lib/hashing.js'

// Made with bcryptjs 3.0.3 (a `$2a$` salt passed to hashSync), so these also prove compatibility.
// Passwords: 'correct horse battery staple' and 'pässwörd-日本語'.
const BCRYPTJS_2A_COST10 = '$2a$10$EqXMJZ1sp6rVGIUYTzxSMufZ2u5R1yDmT6Zse7QXiFQ.4fDPch5hC'
const BCRYPTJS_2B_COST4 = '$2b$04$cTENcWj/fokLp9Qfp8CiwOgPG0ZFJOfLyWR6kGh.jHwWhijSEXI16'

// Most cases use a cost-4 hasher: a cost-12 operation takes ~250 ms on these machines.
const fast = () => createPasswordHasher({ cost: 4 })

t.test('cost 12: $2b$ hashes that verify, no rehash needed', async (t) => {
  const hasher = createPasswordHasher()
  t.teardown(() => hasher.close())
  const h = await hasher.hash('Quartz-Lantern-42')
  t.match(h, /^\$2b\$12\$[./A-Za-z0-9]{53}$/)
  t.equal(bcryptCostOf(h), 12)
  t.same(await hasher.verify('Quartz-Lantern-42', h), { ok: true, needsRehash: false })
  t.same(await hasher.verify('quartz-lantern-42', h), { ok: false, needsRehash: false })
})

t.test('a $2a$ cost-10 hash from bcryptjs verifies and asks for a rehash', async (t) => {
  const hasher = fast()
  t.teardown(() => hasher.close())
  const h12 = createPasswordHasher()
  t.teardown(() => h12.close())
  t.same(await h12.verify('correct horse battery staple', BCRYPTJS_2A_COST10), {
    ok: true,
    needsRehash: true,
  })
  t.same(await h12.verify('Correct horse battery staple', BCRYPTJS_2A_COST10), {
    ok: false,
    needsRehash: false,
  })
  t.same(
    await hasher.verify('pässwörd-日本語', BCRYPTJS_2B_COST4),
    { ok: true, needsRehash: false },
    'cost 4 is current here',
  )
})

t.test('$2y$ is accepted too', async (t) => {
  const hasher = fast()
  t.teardown(() => hasher.close())
  const h = '$2y$' + BCRYPTJS_2B_COST4.slice(4)
  t.same(await hasher.verify('pässwörd-日本語', h), { ok: true, needsRehash: false })
})

t.test('an argon2id hash made with @node-rs/argon2 verifies and asks for a rehash', async (t) => {
  const hasher = fast()
  t.teardown(() => hasher.close())
  const h = await argon2Hash('imported password')
  t.match(h, /^\$argon2id\$/)
  t.same(await hasher.verify('imported password', h), { ok: true, needsRehash: true })
  t.same(await hasher.verify('imported passworD', h), { ok: false, needsRehash: false })
  const long = 'ü'.repeat(40)
  const hl = await argon2Hash(long)
  t.same(
    await hasher.verify(long, hl),
    { ok: false, needsRehash: false },
    'over 72 bytes never verifies, whatever the stored format',
  )
})

t.test('a password over 72 bytes never verifies on its first 72 bytes', async (t) => {
  const hasher = fast()
  t.teardown(() => hasher.close())
  const exact = 'x'.repeat(72)
  const h = await hasher.hash(exact)
  t.same(await hasher.verify(exact, h), { ok: true, needsRehash: false }, '72 bytes verify')
  t.same(await hasher.verify(exact + 'suffix', h), { ok: false, needsRehash: false }, '72 + more do not')
  t.same(await hasher.verify('é'.repeat(37), await hasher.hash('é'.repeat(36))), {
    ok: false,
    needsRehash: false,
  })
})

t.test('hostile or broken stored hashes fail without running them', async (t) => {
  const hasher = fast()
  t.teardown(() => hasher.close())
  const real = await argon2Hash('pw')
  const [, , , , salt, digest] = real.split('$')
  const greedy = `$argon2id$v=19$m=4194304,t=1,p=1$${salt}$${digest}`
  const started = performance.now()
  t.same(await hasher.verify('pw', greedy), { ok: false, needsRehash: false }, 'argon2 asking for 4 GiB')
  t.ok(performance.now() - started < 2000, 'not computed')
  t.same(await hasher.verify('pässwörd-日本語', '$2b$31$' + BCRYPTJS_2B_COST4.slice(7)), {
    ok: false,
    needsRehash: false,
  })
  for (const junk of ['', 'plaintext', '$2b$04$short', '$argon2id$garbage', '$1$md5crypt$xyz']) {
    t.same(await hasher.verify('pw', junk), { ok: false, needsRehash: false }, JSON.stringify(junk))
  }
})

t.test('dummyVerify costs a real cost-12 compare and fails', async (t) => {
  const hasher = createPasswordHasher()
  t.teardown(() => hasher.close())
  t.equal(bcryptCostOf(DUMMY_BCRYPT_HASH), 12)
  const started = performance.now()
  t.equal(await hasher.dummyVerify('anything'), false)
  // Loose bound: cost 12 takes well over 50 ms on any machine we run on.
  t.ok(performance.now() - started > 50, 'it did the work')
})

t.test('hash refuses passwords bcrypt would truncate', async (t) => {
  const hasher = fast()
  t.teardown(() => hasher.close())
  await t.rejects(hasher.hash('a'.repeat(73)), RangeError)
  await t.rejects(hasher.hash('é'.repeat(37)), RangeError)
  t.match(await hasher.hash('é'.repeat(36)), /^\$2b\$04\$/)
})

t.test('queueDepth counts running and waiting work; close drains, then refuses', async (t) => {
  const hasher = createPasswordHasher({ cost: 4, concurrency: 1 })
  t.equal(hasher.concurrency, 1)
  t.equal(hasher.queueDepth(), 0)
  const work = [1, 2, 3].map(() => hasher.verify('pässwörd-日本語', BCRYPTJS_2B_COST4))
  t.equal(hasher.queueDepth(), 3)
  const closed = hasher.close()
  const results = await Promise.all(work)
  t.ok(
    results.every((r) => r.ok),
    'queued work finished after close',
  )
  await closed
  t.equal(hasher.queueDepth(), 0)
  await t.rejects(hasher.hash('x'), /closed/)
})

t.test('option validation', async (t) => {
  t.throws(() => createPasswordHasher({ cost: 3 }), RangeError)
  t.throws(() => createPasswordHasher({ cost: 17 }), RangeError)
  t.throws(() => createPasswordHasher({ concurrency: 0 }), RangeError)
})

t.test('rawBcryptComparesPerSecond measures something', async (t) => {
  const rate = await rawBcryptComparesPerSecond(300, 1)
  t.ok(rate > 0 && rate < 1000, `${rate.toFixed(1)}/s`)
})
