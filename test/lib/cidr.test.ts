import t from 'tap'
import { compileAllowlist, ipInCidrList, isValidCidr, normalizeIp, parseCidr } from '../../src/lib/cidr.js'

t.test('parseCidr: IPv4, IPv6, bare addresses and canonical forms', async (t) => {
  t.same(parseCidr('10.0.0.0/8'), { family: 4, prefix: 8, canonical: '10.0.0.0/8' })
  t.same(parseCidr('10.1.2.3/8'), { family: 4, prefix: 8, canonical: '10.0.0.0/8' }, 'host bits cleared')
  t.same(parseCidr('203.0.113.5'), { family: 4, prefix: 32, canonical: '203.0.113.5/32' })
  t.same(parseCidr('0.0.0.0/0'), { family: 4, prefix: 0, canonical: '0.0.0.0/0' })
  t.same(parseCidr('2001:DB8:0:0:1::/64'), { family: 6, prefix: 64, canonical: '2001:db8::/64' })
  t.same(parseCidr('2001:db8::1'), { family: 6, prefix: 128, canonical: '2001:db8::1/128' })
  t.same(parseCidr('::/0'), { family: 6, prefix: 0, canonical: '::/0' })
  t.same(parseCidr('2001:0:0:1:0:0:0:1/128'), { family: 6, prefix: 128, canonical: '2001:0:0:1::1/128' })
  t.same(
    parseCidr('::ffff:203.0.113.0/120'),
    { family: 4, prefix: 24, canonical: '203.0.113.0/24' },
    'mapped',
  )
  t.same(parseCidr('::ffff:cb00:7105'), { family: 4, prefix: 32, canonical: '203.0.113.5/32' }, 'mapped, hex')
})

t.test('invalid CIDRs are refused', async (t) => {
  const bad = [
    '',
    '10.0.0.0/33',
    '10.0.0.256',
    '10.0.0',
    '10.0.0.0/',
    '10.0.0.0/08',
    '010.0.0.0/8',
    ' 10.0.0.0/8',
    '10.0.0.0/8/8',
    '2001:db8::/129',
    '2001:db8:::1',
    '2001:db8::1::2',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7',
    '12345::',
    'fe80::1%eth0',
    'example.com',
    '::ffff:1.2.3',
    '1.2.3.4::',
  ]
  for (const s of bad) {
    t.equal(parseCidr(s), null, JSON.stringify(s))
    t.notOk(isValidCidr(s))
  }
})

t.test('ipInCidrList matches IPv4, IPv6 and mapped addresses both ways', async (t) => {
  t.ok(ipInCidrList('203.0.113.5', ['203.0.113.0/24']))
  t.notOk(ipInCidrList('203.0.114.5', ['203.0.113.0/24']))
  t.ok(ipInCidrList('::ffff:203.0.113.5', ['203.0.113.0/24']), 'mapped request ip, IPv4 entry')
  t.ok(ipInCidrList('203.0.113.5', ['::ffff:203.0.113.0/120']), 'IPv4 request ip, mapped entry')
  t.ok(ipInCidrList('::FFFF:CB00:7105', ['203.0.113.5']), 'mapped in hex, bare IPv4 entry as /32')
  t.notOk(ipInCidrList('203.0.113.6', ['203.0.113.5']))
  t.ok(ipInCidrList('2001:db8::abcd', ['2001:db8::/32']))
  t.ok(ipInCidrList('2001:db8:0:0::1', ['2001:db8::1']), 'bare IPv6 entry as /128, different spelling')
  t.notOk(ipInCidrList('2001:db9::1', ['2001:db8::/32']))
  t.ok(ipInCidrList('fe80::1%eth0', ['fe80::/10']), 'zone id of the request ip is ignored')
  t.notOk(ipInCidrList('2001:db8::1', ['0.0.0.0/0']), 'all of IPv4 is not native IPv6')
  t.ok(ipInCidrList('::ffff:10.0.0.1', ['0.0.0.0/0']))
  t.ok(ipInCidrList('10.0.0.1', ['::/0']), '::/0 covers the mapped range, so IPv4 too')
  t.ok(ipInCidrList('10.0.0.1', ['192.0.2.0/24', '10.0.0.0/8']), 'any entry')
  t.notOk(ipInCidrList('10.0.0.1', []), 'empty list: no membership')
  t.notOk(ipInCidrList('not-an-ip', ['0.0.0.0/0', '::/0']))
  t.notOk(ipInCidrList('10.0.0.1', ['bogus']))
})

t.test('compileAllowlist: empty allows all, invalid entries never widen', async (t) => {
  const any = compileAllowlist([])
  t.ok(any('198.51.100.1'))
  t.ok(any('2001:db8::1'))
  const allow = compileAllowlist(['198.51.100.0/24', '2001:db8::/48'])
  t.ok(allow('198.51.100.77'))
  t.ok(allow('::ffff:198.51.100.77'))
  t.ok(allow('2001:db8:0:ffff::1'))
  t.notOk(allow('2001:db8:1::1'))
  t.notOk(allow('198.51.101.1'))
  t.notOk(allow('garbage'))
  const corrupt = compileAllowlist(['not a cidr'])
  t.notOk(corrupt('198.51.100.1'), 'a list of only invalid entries allows nothing')
})

t.test('normalizeIp', async (t) => {
  t.equal(normalizeIp('::ffff:203.0.113.5'), '203.0.113.5')
  t.equal(normalizeIp('::ffff:cb00:7105'), '203.0.113.5')
  t.equal(normalizeIp('203.0.113.5'), '203.0.113.5')
  t.equal(normalizeIp('2001:DB8:0:0:0:0:0:1'), '2001:db8::1')
  t.equal(normalizeIp('2001:db8:0:1:0:0:0:0'), '2001:db8:0:1::', 'longest zero run')
  t.equal(normalizeIp('2001:0:0:1:0:0:1:1'), '2001::1:0:0:1:1', 'first of equal runs')
  t.equal(normalizeIp('2001:db8:1:1:1:1:0:1'), '2001:db8:1:1:1:1:0:1', 'a single zero group stays')
  t.equal(normalizeIp('::1'), '::1')
  t.equal(normalizeIp('::'), '::')
  t.equal(normalizeIp('fe80::1%eth0'), 'fe80::1')
  t.equal(normalizeIp('unknown'), 'unknown', 'non-addresses pass through')
})
