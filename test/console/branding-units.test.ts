import t from 'tap'
import document from '../../generated/openapi.json' with { type: 'json' }
import { contrast, luminance, textOn } from '../../console/src/lib/contrast.js'
import { TENANT_CODE } from '../../console/src/lib/tenant-code.js'
import { validate, type JsonSchema } from '../../console/src/lib/schema.js'
import { resolveSchema } from '../../console/vite.config.js'

// Issue 44's branding in the console, without a browser: the text colour on a tenant's colour, and the
// Settings form's check of `branding` against the document's own schema.

t.test('the text on a brand colour: black or white, readable (WCAG 4.5:1) whatever the colour', async (t) => {
  t.equal(luminance('#000000'), 0)
  t.equal(luminance('#ffffff'), 1)
  t.equal(textOn('#7a1fa2'), '#ffffff', 'a dark purple: white')
  t.equal(textOn('#ffd54f'), '#000000', 'a light yellow: black')
  t.equal(textOn('#0b5cad'), '#ffffff', 'the console’s own blue: white')
  // Every colour of a coarse grid, the worst case near the middle grey included.
  for (let r = 0; r < 256; r += 17) {
    for (let g = 0; g < 256; g += 17) {
      for (let b = 0; b < 256; b += 17) {
        const hex = `#${[r, g, b].map((c) => c.toString(16).padStart(2, '0')).join('')}`
        const text = textOn(hex) === '#000000' ? 0 : 1
        if (contrast(luminance(hex), text) < 4.5) t.fail(`${hex}: ${contrast(luminance(hex), text)}`)
      }
    }
  }
  t.pass('every colour of the grid reads at 4.5:1 or more')
})

t.test('form validation: branding as the document has it', async (t) => {
  const schema = resolveSchema(document as never, 'AuthConfigPatch') as JsonSchema
  const png = 'data:image/png;base64,iVBORw0KGgo='
  t.same(validate(schema, { branding: { displayName: 'Acme', logo: png, color: '#0b5cad' } }), [])
  t.same(validate(schema, { branding: null }), [], 'off')
  for (const bad of [
    { color: 'red' },
    { displayName: 'x'.repeat(65) },
    { displayName: 'tab\there' },
    { logo: 'https://cdn.example.com/logo.png' },
    { logo: 'data:image/svg+xml;base64,PHN2Zy8+' },
  ]) {
    t.ok(validate(schema, { branding: bad }).length > 0, JSON.stringify(bad).slice(0, 60))
  }
})

t.test('a tenant code as the document takes it', async (t) => {
  t.ok(TENANT_CODE.test('acme-1'))
  t.notOk(TENANT_CODE.test('bad code'))
  t.notOk(TENANT_CODE.test(''))
})
