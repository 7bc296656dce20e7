import t from 'tap'
import { createMailTransport } from '../../src/modules/email/transport.js'

// SMTP_URL=log:// for a person at `make run` (issue 44, "the first hour"): the JSON line for collectors, and on
// a terminal a readable block whose link stands on a line of its own, ready to copy.

t.test('the log:// transport: a JSON line, and a readable block on a terminal', async (t) => {
  const lines: { obj: { mail?: { text?: string } }; msg: string }[] = []
  let written = ''
  const link = 'http://localhost:3000/console/reset-password?tenant=acme&token=abc_DEF-123'
  const transport = createMailTransport(
    'log://',
    'Acme <no-reply@acme.test>',
    { info: (obj, msg) => void lines.push({ obj, msg }) },
    { write: (text: string) => (written += text) },
  )
  t.teardown(() => transport.close())
  await transport.send({
    to: 'ana@acme.test',
    subject: 'Reset your password',
    text: `Hello,\n\nChoose a new password:\n${link}\n`,
    html: `<p>Hello</p><p><a href="${link}">Choose a new password</a></p>`,
  })
  t.equal(lines.length, 1, 'one log line')
  t.match(lines[0]?.obj.mail?.text, link, 'the JSON line keeps the text')
  t.match(written, /To: +ana@acme\.test/)
  t.match(written, /Subject: +Reset your password/)
  t.ok(written.split('\n').includes(link), 'the link on a line of its own, not quoted-printable')

  const quiet = createMailTransport('log://', undefined, { info: () => undefined }, undefined)
  t.teardown(() => quiet.close())
  await quiet.send({ to: 'b@acme.test', subject: 's', text: 't', html: '<p>t</p>' })
  t.pass('off a terminal: the JSON line only (nothing else to write to)')
})
