import t from 'tap'
import { buildTestApp } from '../helpers/app.js'
import { call } from '../helpers/call.js'
import { createTenant, createUser, platformKey } from '../helpers/fixtures.js'
import { html, renderMessage } from '../../src/modules/email/templates.js'
import { linkFor, linkTemplateAcceptable } from '../../src/modules/email/config.js'
import { appWithMail, tokenOf } from './smtp.js'

// Messages: escaping by construction, locales, links from auth_config.email, and its validation.

const NASTY = `<b>Acme & "Sons"</b> 'Ltd' <script>alert(1)</script>`

t.test('messages: html`` escapes every interpolation, and a fragment only once', async (t) => {
  t.equal(
    html`<p>${NASTY}</p>`.value,
    '<p>&lt;b&gt;Acme &amp; &quot;Sons&quot;&lt;/b&gt; &#39;Ltd&#39; &lt;script&gt;alert(1)&lt;/script&gt;</p>',
  )
  t.equal(html`<div>${html`<i>${'<x>'}</i>`}</div>`.value, '<div><i>&lt;x&gt;</i></div>')
  const m = renderMessage({
    purpose: 'reset',
    locale: 'pt-BR',
    tenantName: NASTY,
    link: 'https://a.test/?a=1&b="2"',
    recipient: `<a&b>"c"'d'@example.test`,
    minutes: 30,
  })
  t.notMatch(m.html, /<script>/)
  t.notMatch(m.html, /<b>Acme/)
  t.match(m.html, /href="https:\/\/a\.test\/\?a=1&amp;b=&quot;2&quot;"/)
  t.match(m.subject, /^Redefina sua senha de /)
  t.match(m.text, /30 minutos/)
  t.notMatch(m.html, /<img|src=/i, 'no remote image or tracker')
  t.match(m.html, /&lt;a&amp;b&gt;&quot;c&quot;&#39;d&#39;@example\.test/, 'the address is escaped')
})

t.test('messages: links from the tenant templates, and their validation', async (t) => {
  t.ok(linkTemplateAcceptable('https://app.acme.test/reset?t={token}'))
  t.ok(linkTemplateAcceptable('http://localhost:5173/reset/{tenantCode}/{token}'))
  t.ok(linkTemplateAcceptable('http://127.0.0.1/r?t={token}'))
  t.notOk(linkTemplateAcceptable('http://app.acme.test/reset?t={token}'), 'plain http off loopback')
  t.notOk(linkTemplateAcceptable('https://app.acme.test/reset'), 'no {token}')
  t.notOk(linkTemplateAcceptable('https://u:p@app.acme.test/{token}'), 'credentials')
  t.notOk(linkTemplateAcceptable('javascript:alert(1)//{token}'))
  t.equal(
    linkFor(null, 'verify-email', { publicUrl: 'https://auth.test', tenantCode: 'acme', token: 'abc' }),
    'https://auth.test/console/verify-email?tenant=acme&token=abc',
  )
})

t.test(
  'forgotPassword: a tenant name and a user email with < > & and quotes arrive escaped, in pt-BR, with the tenant’s link',
  async (t) => {
    const { smtp, app, mailer } = await appWithMail(t)
    const tenant = await createTenant(app)
    const set = await call(app, 'updateTenant', platformKey, {
      params: { id: tenant.id },
      body: { name: NASTY.slice(0, 60) },
    })
    t.equal(set.status, 200, 'the name is set through the API')
    const cfg = await call(app, 'updateTenantConfig', platformKey, {
      params: { id: tenant.id },
      body: {
        email: { locale: 'pt-BR', resetUrl: 'https://app.example.test/reset?c={tenantCode}&token={token}' },
      },
    })
    t.equal(cfg.status, 200)
    t.equal(cfg.data.email.locale, 'pt-BR')
    // An address with & and quotes (atext, so SMTP takes it): named in the body, escaped there.
    const plain = await createUser(app, tenant, { email: "o'brien&co@example.test" })
    t.equal(
      (await call(app, 'forgotPassword', {}, { body: { tenantCode: tenant.code, identifier: plain.email } }))
        .status,
      202,
    )
    await mailer.idle()
    await smtp.waitForCount(1)
    const mail = smtp.messages.at(-1)!
    t.match(String(mail.subject), /^Redefina sua senha de /)
    t.notMatch(String(mail.html), /<b>Acme|<script>/, 'the name is escaped in HTML')
    t.match(String(mail.html), /&lt;b&gt;Acme &amp; &quot;Sons&quot;/)
    t.match(
      String(mail.html),
      /enviada para o&#39;brien&amp;co@example\.test/,
      'the address is escaped in HTML',
    )
    t.match(mail.text ?? '', /enviada para o'brien&co@example\.test/, 'and plain in the text')
    t.match(mail.text ?? '', new RegExp(`https://app\\.example\\.test/reset\\?c=${tenant.code}&token=`))
    t.ok(tokenOf(mail).length >= 43)
  },
)

t.test(
  'updateTenantConfig: 400 VALIDATION_ERROR for an email link that is not https, or lacks {token}',
  async (t) => {
    const app = await buildTestApp(t)
    const tenant = await createTenant(app)
    for (const resetUrl of ['http://app.example.test/{token}', 'https://app.example.test/reset']) {
      const res = await call(app, 'updateTenantConfig', platformKey, {
        params: { id: tenant.id },
        body: { email: { resetUrl } },
      })
      t.equal(res.status, 400, resetUrl)
      t.equal(res.code, 'VALIDATION_ERROR')
    }
    const ok = await call(app, 'updateTenantConfig', platformKey, {
      params: { id: tenant.id },
      body: { email: { verification: 'required', verifyUrl: 'http://localhost:8080/v?t={token}' } },
    })
    t.equal(ok.status, 200)
    t.same(ok.data.email, {
      locale: 'en',
      passwordResetTtlSeconds: 1800,
      verification: 'required',
      verificationTtlSeconds: 86400,
      resetUrl: null,
      verifyUrl: 'http://localhost:8080/v?t={token}',
    })
    const bad = await call(app, 'updateTenantConfig', platformKey, {
      params: { id: tenant.id },
      body: { email: { passwordResetTtlSeconds: 10 } },
    })
    t.equal(bad.code, 'VALIDATION_ERROR', 'ranges hold')
  },
)
