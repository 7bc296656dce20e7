import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli as cli } from '../helpers/service-process.js'

t.test('npm run cli: bootstrap, tenant create, client-key create, migrate', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-cli-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const env = {
    DATA_DIR: dir,
    BOOTSTRAP_ADMIN_EMAIL: 'root@example.test',
    BOOTSTRAP_ADMIN_PASSWORD: 'Bootstrap-pass-1',
    JWT_SECRET: 'cli-test-jwt-secret-0123456789abcdef',
    SECRETS_KEY: 'cli-test-secrets-key-0123456789abcdef',
  }

  const help = await cli(['--help'], env)
  t.equal(help.code, 0)
  t.match(help.stdout, /tenant create/)

  const boot = await cli(['bootstrap', '--json'], env)
  t.equal(boot.code, 0)
  const b = JSON.parse(boot.stdout)
  t.ok(b.platformTenantId)
  t.equal(b.admin.created, true)

  const again = JSON.parse((await cli(['bootstrap', '--json'], env)).stdout)
  t.equal(again.admin.created, false, 'bootstrap is idempotent')

  const tenant = JSON.parse(
    (await cli(['tenant', 'create', '--code', 'acme', '--name', 'Acme', '--json'], env)).stdout,
  )
  t.equal(tenant.code, 'acme')
  const dup = await cli(['tenant', 'create', '--code', 'acme', '--name', 'Acme', '--json'], env)
  t.equal(dup.code, 1)
  t.match(JSON.parse(dup.stdout).error, /already exists/)

  const key = JSON.parse(
    (
      await cli(
        [
          'client-key',
          'create',
          '--tenant',
          'acme',
          '--name',
          'signup',
          '--scopes',
          'users:create',
          '--json',
        ],
        env,
      )
    ).stdout,
  )
  t.match(key.key, /^ck_[A-Za-z0-9_-]{43,}$/)
  t.same(key.scopes, ['users:create'])
  const refused = await cli(
    ['client-key', 'create', '--tenant', 'acme', '--name', 'x', '--scopes', 'admin:*', '--json'],
    env,
  )
  t.equal(refused.code, 1, 'admin:* only in the platform tenant')

  const migrate = JSON.parse((await cli(['migrate', '--json'], env)).stdout)
  t.same(migrate.applied, [], 'nothing left to apply')
})
