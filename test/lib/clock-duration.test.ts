import t from 'tap'
import { createManualClock, systemClock } from '../../src/lib/clock.js'
import { parseSince } from '../../src/lib/duration.js'

t.test('systemClock follows Date.now', async (t) => {
  const before = Date.now()
  const n = systemClock.now()
  t.ok(n >= before && n <= Date.now())
})

t.test('manual clock moves only when told', async (t) => {
  const c = createManualClock(1000)
  t.equal(c.now(), 1000)
  c.advance(500)
  t.equal(c.now(), 1500)
  c.set(42)
  t.equal(c.now(), 42)
})

t.test('parseSince', async (t) => {
  t.equal(parseSince('30m'), 30 * 60_000)
  t.equal(parseSince('24h'), 24 * 3_600_000)
  t.equal(parseSince('7d'), 7 * 86_400_000)
  t.equal(parseSince('1h'), 3_600_000)
  for (const bad of [
    '',
    'h',
    '0h',
    '-1h',
    '+1h',
    '1.5h',
    '01h',
    '1H',
    '1w',
    '1s',
    ' 1h',
    '1h ',
    '1000000d',
    '24',
  ]) {
    t.equal(parseSince(bad), null, JSON.stringify(bad))
  }
})
