import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { buildApp, type AppOptions } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { installContractGuard } from './contract-guard.js'
import { createTestDatabaseUrl, defaultBackend, pgliteTemplate } from './db.js'

/** The tap test object, as far as these helpers need it. */
export interface TestLike {
  teardown(fn: () => unknown): void
}

export interface TestApp extends FastifyInstance {
  /** Responses that broke the OpenAPI contract (also turned into 500s). */
  contractViolations: string[]
}

/** A fixed bootstrap key of the platform tenant, present in every test app. */
export const PLATFORM_KEY = 'ck_' + 'p'.repeat(43)

/**
 * The environment of every test app, under the database URL and a test's own variables.
 * TRUST_PROXY: inject() sends from 127.0.0.1, and tests give a client an address of its own through
 * X-Forwarded-For, as a proxy on the same host would. The service's default trusts no proxy; a test of
 * that default passes `TRUST_PROXY: ''` (unset).
 */
export const TEST_ENV: Readonly<Record<string, string>> = {
  LOG_LEVEL: 'silent',
  TRUST_PROXY: 'loopback',
  BOOTSTRAP_CLIENT_KEY: PLATFORM_KEY,
  JWT_SECRET: 'test-default-jwt-secret-0123456789abcdef',
  SECRETS_KEY: 'test-secrets-key-0123456789abcdef0123',
}

/**
 * Builds the app on a fresh database (PGlite in memory, or a new database on TEST_DATABASE_URL's server
 * when `backend` is 'postgres'), with the contract guard installed; closes both in teardown.
 */
export async function buildTestApp(
  t: TestLike,
  env: Record<string, string> = {},
  options: AppOptions & { backend?: 'pglite' | 'postgres' } = {},
): Promise<TestApp> {
  const backend = options.backend ?? defaultBackend()
  const { url, drop } = await createTestDatabaseUrl(backend)
  const pgliteDataDir = backend === 'pglite' ? await pgliteTemplate() : undefined
  const config = loadConfig({ DATABASE_URL: url, ...TEST_ENV, REDIS_KEY_PREFIX: ownPrefix(), ...env })
  const violations: string[] = []
  const app = (await buildApp(config, {
    pgliteDataDir,
    // bcrypt at cost 4 unless the test says 12 (AppOptions.passwordCost): hashing's own tests, timing.
    passwordCost: 4,
    ...options,
    beforeRoutes: async (a) => {
      installContractGuard(a, violations)
      await options.beforeRoutes?.(a)
    },
  })) as TestApp
  app.contractViolations = violations
  t.teardown(async () => {
    await app.close()
    await drop()
    if (violations.length > 0) throw new Error(`contract violations:\n${violations.join('\n')}`)
  })
  return app
}

/** buildTestApp at LOG_LEVEL trace with every log line kept in `lines`: for tests of what the logs carry. */
export async function buildLoggedTestApp(t: TestLike): Promise<{ app: TestApp; lines: string[] }> {
  const lines: string[] = []
  const app = await buildTestApp(
    t,
    { LOG_LEVEL: 'trace' },
    { logStream: { write: (l: string) => void lines.push(l) } },
  )
  return { app, lines }
}

/**
 * Two instances on one fresh PostgreSQL database (as two servers behind a balancer would be); both and the
 * database are closed in teardown.
 */
export async function twoInstances(
  t: TestLike,
  env: Record<string, string> = {},
): Promise<{ url: string; one: FastifyInstance; two: FastifyInstance }> {
  const { url, drop } = await createTestDatabaseUrl('postgres')
  t.teardown(drop)
  const one = await buildAppOn({ DATABASE_URL: url, ...env })
  t.teardown(() => one.close())
  const two = await buildAppOn({ DATABASE_URL: url, ...env })
  t.teardown(() => two.close())
  return { url, one, two }
}

/**
 * Builds an app (no contract guard, no teardown) on the database `env` names, for tests that manage the
 * database themselves (two instances on one database, a shutdown); the caller closes it.
 */
export function buildAppOn(env: Record<string, string>, options: AppOptions = {}): Promise<FastifyInstance> {
  return buildApp(loadConfig({ ...TEST_ENV, REDIS_KEY_PREFIX: ownPrefix(), ...env }), {
    passwordCost: 4,
    ...options,
  })
}

/**
 * A Redis key prefix of one app's own, so apps share no counters through TEST_REDIS_URL; tests that
 * want two apps to share pass the same REDIS_KEY_PREFIX to both.
 */
function ownPrefix(): string {
  return `t-${randomUUID()}:`
}
