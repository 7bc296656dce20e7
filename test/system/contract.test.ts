import t from 'tap'
import { readFileSync } from 'node:fs'
import { routes } from '../../generated/routes.js'
import { buildTestApp } from '../helpers/app.js'

const pendingFile = new URL('../pending-operations.json', import.meta.url)

t.test('every operation of the document is served, except those listed as pending', async (t) => {
  const served = new Set<string>()
  const app = await buildTestApp(
    t,
    {},
    {
      beforeRoutes: (a) => {
        a.addHook('onRoute', (r) => {
          if (r.config?.operationId) served.add(r.config.operationId)
        })
      },
    },
  )
  await app.ready()
  const pending: string[] = JSON.parse(readFileSync(pendingFile, 'utf8'))
  const unserved = Object.keys(routes)
    .filter((id) => !served.has(id))
    .sort()
  t.same(
    unserved,
    [...pending].sort(),
    'test/pending-operations.json lists exactly the operations without a route',
  )
  t.same(app.contractViolations, [], 'no route outside the document')
})

t.test('the route table matches the bundled document', async (t) => {
  const doc = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'))
  let count = 0
  for (const item of Object.values(doc.paths) as Record<string, { operationId?: string }>[]) {
    for (const op of Object.values(item)) if (op && typeof op === 'object' && op.operationId) count++
  }
  t.equal(Object.keys(routes).length, count)
})
