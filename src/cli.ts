/**
 * Operator CLI over the same services the API uses: `npm run cli -- --help`.
 * Works against the configured database (DATABASE_URL / DATA_DIR). On PostgreSQL it may run beside the
 * service; on the embedded database (PGlite) it refuses while a service holds DATA_DIR, because PGlite
 * allows one process per directory: use the service's API then (see the README's first steps).
 */
import { parseArgs } from 'node:util'
import { pino } from 'pino'
import { loadConfig, type Config } from './config.js'
import type { AppContext } from './context.js'
import { openDatabase, type OpenedDatabase } from './db/connect.js'
import { migrateToLatest } from './db/migrate.js'
import { AppError } from './errors.js'
import { createPasswordHasher } from './lib/hashing.js'
import { operatorPrincipal, type Principal } from './security/principal.js'
import { closeContext, createContext } from './app/create-context.js'
import { bootstrap, ensurePlatformTenant } from './modules/system/bootstrap.js'
import { createClientKey } from './modules/client-keys/service.js'
import { createTenant } from './modules/tenants/service.js'

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

// Why: what the CLI writes, the API reads back under the document's bounds (TenantName, KeyName,
// PermissionName, a key's at most 500 scopes); the CLI may not store what the API would refuse.
// eslint-disable-next-line no-control-regex
const DISPLAY_NAME = /^[^\u0000-\u001F\u007F]{1,100}$/u
const PERMISSION_NAME = /^[a-z][a-z0-9-]*:([a-z][a-z0-9-]*|\*)$/
const MAX_SCOPES = 500

function checkName(name: string): void {
  if (!DISPLAY_NAME.test(name)) throw new Error('--name must be 1-100 characters without control characters')
}

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
  try {
    const applied = await migrateToLatest(opened.db)
    if (cmd === 'migrate') return { applied }
    if (cmd === 'bootstrap') {
      const hasher = createPasswordHasher({ cost: 12 })
      try {
        return { ...(await bootstrap(opened.db, config, hasher)) }
      } finally {
        await hasher.close()
      }
    }
    if (cmd === 'tenant' && sub === 'create') {
      const { code, name } = values
      if (!code || !name) throw new Error('tenant create needs --code and --name')
      checkName(name)
      if (!/^[a-z0-9][a-z0-9-]{1,62}[a-z0-9]$/.test(code))
        throw new Error('--code is not a valid tenant code')
      const email = values['admin-email']
      const password = values['admin-password']
      let admin: { email: string; password: string } | undefined
      if (email) {
        if (!password) throw new Error('--admin-email needs --admin-password')
        admin = { email, password }
      }
      const created = await asOperator(config, opened, false, (ctx, operator) =>
        createTenant(ctx, operator, { code, name, admin }),
      ).catch((err: unknown) => {
        if (err instanceof AppError && err.code === 'TENANT_ALREADY_EXISTS')
          throw new Error(`tenant ${code} already exists`)
        throw err
      })
      const adminUserId = 'adminUserId' in created ? created.adminUserId : undefined
      return {
        id: created.id,
        code: created.code,
        name: created.name,
        ...(adminUserId ? { adminUserId } : {}),
      }
    }
    if (cmd === 'client-key' && sub === 'create') {
      const { name } = values
      if (!values.tenant || !name || !values.scopes)
        throw new Error('client-key create needs --tenant, --name and --scopes')
      const tenantCode = values.tenant
      const scopes = values.scopes
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
      checkName(name)
      if (scopes.length > MAX_SCOPES) throw new Error(`--scopes takes at most ${MAX_SCOPES} names`)
      const malformed = scopes.find((s) => s.length > 128 || !PERMISSION_NAME.test(s))
      if (malformed !== undefined) throw new Error(`--scopes: ${malformed} is not a permission name`)
      const key = await asOperator(config, opened, true, async (ctx, operator) => {
        const tenant = (await ctx.tenants.byCode(tenantCode)) ?? fail(`tenant ${tenantCode} not found`)
        return createClientKey(ctx, operator, { name, scopes, tenantId: tenant.id })
      })
      return { id: key.id, tenantId: key.tenantId, name: key.name, prefix: key.prefix, scopes, key: key.key }
    }
    throw new Error(`unknown command: ${positionals.join(' ') || '(none)'}; see --help`)
  } finally {
    await opened.close()
  }
}

const fail = (message: string): never => {
  throw new Error(message)
}

/**
 * Runs `fn` with the service's own context and the operator principal (the platform tenant with
 * `admin:*`), so a command goes through the same service functions, and rules, as the API. With
 * `routes`, tenants routed to their own databases are reached there, as the service reaches them.
 */
async function asOperator<T>(
  config: Config,
  opened: OpenedDatabase,
  routes: boolean,
  fn: (ctx: AppContext, operator: Principal) => Promise<T>,
): Promise<T> {
  // Why stderr and warn: stdout carries the result (--json), and only trouble is worth a line.
  const log = pino({ level: 'warn' }, pino.destination(2))
  const ctx = await createContext(config, opened, { log })
  try {
    const platform = await ensurePlatformTenant(opened.db, config.platformTenantCode)
    if (routes) await ctx.routing.start()
    try {
      return await fn(ctx, operatorPrincipal(platform))
    } finally {
      if (routes) await ctx.routing.stop()
    }
  } finally {
    await closeContext(ctx)
  }
}

/** An error as the operator reads it: the message, and for a refused input what was wrong with it. */
function describe(err: unknown): string {
  if (!(err instanceof AppError)) return err instanceof Error ? err.message : String(err)
  const details = Array.isArray(err.details)
    ? err.details.map((d: unknown) => {
        const issue = d as { path?: unknown; message?: unknown }
        return typeof issue === 'object' && issue !== null && 'path' in issue
          ? `${String(issue.path)}: ${String(issue.message)}`
          : String(d)
      })
    : []
  return details.length > 0 ? `${err.message} (${details.join('; ')})` : err.message
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
    const message = describe(err)
    if (json) console.log(JSON.stringify({ error: message }))
    else console.error(`error: ${message}`)
    process.exitCode = 1
  }
}

void main()
