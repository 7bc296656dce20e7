/**
 * Operator CLI over the same services the API uses: `npm run cli -- --help`.
 * Works against the configured database (DATABASE_URL / DATA_DIR). On PostgreSQL it may run beside the
 * service; on the embedded database (PGlite) it refuses while a service holds DATA_DIR, because PGlite
 * allows one process per directory: use the service's API then (see the README's first steps).
 */
import { parseArgs } from 'node:util'
import { loadConfig, type Config } from './config.js'
import { openDatabase } from './db/connect.js'
import { migrateToLatest } from './db/migrate.js'
import { bootstrap, ensurePlatformTenant } from './bootstrap.js'
import { createPasswordHasher } from './lib/hashing.js'
import { keyPrefix } from './lib/tokens.js'
import { insertClientKey } from './modules/client-keys/queries.js'
import { normalizeEmail } from './lib/identifiers.js'
import { findTenantByCode } from './modules/tenants/queries.js'
import { provisionTenant } from './modules/tenants/provision.js'

const HELP = `Tessera operator CLI

Usage: npm run cli -- <command> [options]

Commands:
  migrate                              apply pending database migrations
  bootstrap                            create the platform tenant, and the bootstrap key/admin
                                       from BOOTSTRAP_CLIENT_KEY / BOOTSTRAP_ADMIN_EMAIL / _PASSWORD
  tenant create --code C --name N      create a tenant (built-in roles included)
         [--admin-email E --admin-password P]
  client-key create --tenant C --name N --scopes a:b,c:d
                                       create a Client Key; its value is printed once

Options:
  --json       print the result as JSON
  --help       show this help

The database is the one the service uses: DATABASE_URL (postgres:// or memory://), else PGlite under DATA_DIR.
PGlite allows one process per DATA_DIR: while the service runs on it, this CLI refuses (exit 1) and
names the process; do the same through the service's API instead, or stop the service first.
`

type Result = Record<string, unknown>

function print(result: Result, json: boolean): void {
  if (json) console.log(JSON.stringify(result))
  else
    for (const [k, v] of Object.entries(result))
      console.log(`${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
}

async function run(config: Config, argv: string[]): Promise<Result> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean' },
      help: { type: 'boolean' },
      code: { type: 'string' },
      name: { type: 'string' },
      tenant: { type: 'string' },
      scopes: { type: 'string' },
      'admin-email': { type: 'string' },
      'admin-password': { type: 'string' },
    },
  })
  const [cmd, sub] = positionals
  const opened = await openDatabase(config.databaseUrl, { dataDir: config.dataDir, poolMax: 2 })
  const hasher = createPasswordHasher({ cost: 12 })
  try {
    const applied = await migrateToLatest(opened.db)
    if (cmd === 'migrate') return { applied }
    if (cmd === 'bootstrap') return { ...(await bootstrap(opened.db, config, hasher)) }
    if (cmd === 'tenant' && sub === 'create') {
      if (!values.code || !values.name) throw new Error('tenant create needs --code and --name')
      if (!/^[a-z0-9][a-z0-9-]{1,62}[a-z0-9]$/.test(values.code))
        throw new Error('--code is not a valid tenant code')
      if (await findTenantByCode(opened.db, values.code))
        throw new Error(`tenant ${values.code} already exists`)
      const email = values['admin-email'] ? normalizeEmail(values['admin-email']) : null
      if (values['admin-email'] && (!email || !values['admin-password'])) {
        throw new Error('--admin-email must be a valid email and needs --admin-password')
      }
      const admin = email
        ? {
            email,
            username: null,
            cpf_cnpj: null,
            passwordHash: await hasher.hash(values['admin-password'] as string),
          }
        : undefined
      const { tenant, adminUserId } = await provisionTenant(opened.db, {
        code: values.code,
        name: values.name,
        admin,
      })
      return { id: tenant.id, code: tenant.code, name: tenant.name, ...(adminUserId ? { adminUserId } : {}) }
    }
    if (cmd === 'client-key' && sub === 'create') {
      if (!values.tenant || !values.name || !values.scopes)
        throw new Error('client-key create needs --tenant, --name and --scopes')
      const scopes = values.scopes
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
      const tenant =
        values.tenant === config.platformTenantCode
          ? await ensurePlatformTenant(opened.db, config.platformTenantCode)
          : await findTenantByCode(opened.db, values.tenant)
      if (!tenant) throw new Error(`tenant ${values.tenant} not found`)
      if (scopes.includes('admin:*') && tenant.code !== config.platformTenantCode) {
        throw new Error('admin:* can only be given inside the platform tenant')
      }
      const created = await insertClientKey(opened.db, { tenantId: tenant.id, name: values.name, scopes })
      if (!created) throw new Error('could not create the key')
      const { id, value } = created
      return { id, tenantId: tenant.id, name: values.name, prefix: keyPrefix(value), scopes, key: value }
    }
    throw new Error(`unknown command: ${positionals.join(' ') || '(none)'}; see --help`)
  } finally {
    await hasher.close()
    await opened.close()
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2)
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    console.log(HELP)
    return
  }
  const json = argv.includes('--json')
  try {
    print(await run(loadConfig(), argv), json)
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    if (json) console.log(JSON.stringify({ error: message }))
    else console.error(`error: ${message}`)
    process.exitCode = 1
  }
}

void main()
