import t from 'tap'
import { rateLimitSubject } from '../../src/lib/cidr.js'

t.test('rateLimitSubject: an IPv6 address stands for its /64', async (t) => {
  t.equal(rateLimitSubject('2001:db8:1:2::1'), '2001:db8:1:2::/64')
  t.equal(rateLimitSubject('2001:db8:1:2:ffff::9'), '2001:db8:1:2::/64', 'same /64, same subject')
  t.equal(rateLimitSubject('2001:DB8:1:2:aaaa:bbbb:cccc:dddd'), '2001:db8:1:2::/64', 'any case, any spelling')
  t.equal(rateLimitSubject('2001:db8:1:3::1'), '2001:db8:1:3::/64', 'the next /64 is another subject')
  t.equal(rateLimitSubject('fe80::1%eth0'), 'fe80::/64', 'zone id dropped')
  t.equal(rateLimitSubject('::1'), '::/64')
})

t.test('rateLimitSubject: IPv4, plain or IPv4-mapped, is one subject per address', async (t) => {
  t.equal(rateLimitSubject('203.0.113.5'), '203.0.113.5')
  t.equal(rateLimitSubject('::ffff:203.0.113.5'), '203.0.113.5', 'mapped, dotted')
  t.equal(rateLimitSubject('::ffff:cb00:7105'), '203.0.113.5', 'mapped, hex')
  t.equal(rateLimitSubject('203.0.113.6'), '203.0.113.6', 'the neighbour is another subject')
})

t.test('rateLimitSubject: text that is not an address comes back unchanged', async (t) => {
  t.equal(rateLimitSubject('unknown'), 'unknown')
  t.equal(rateLimitSubject(''), '')
})
