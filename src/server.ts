import { loadConfig } from './config.js'
import { buildApp } from './app.js'
import { isPrimaryOfCluster, superviseWorkers } from './app/workers.js'
import { preloadWebauthn } from './modules/passkeys/webauthn.js'

/** Starts the service: config from the environment, listen, and a bounded graceful stop on signals. */
async function main(): Promise<void> {
  const config = loadConfig()
  if (isPrimaryOfCluster(config)) {
    superviseWorkers(config, (msg) => console.log(JSON.stringify({ level: 30, time: Date.now(), msg })))
    return
  }
  const app = await buildApp(config)
  let stopping = false
  const stop = (signal: string): void => {
    if (stopping) return
    stopping = true
    app.log.info({ signal }, 'shutting down')
    // Why: a stuck request or pool must not keep the process alive past the promised bound.
    const timer = setTimeout(() => {
      app.log.error('shutdown timed out; exiting')
      process.exit(1)
    }, config.shutdownTimeoutMs)
    timer.unref()
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        app.log.error({ err }, 'error during shutdown')
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  await app.listen({ port: config.port, host: config.host })
  const consoleUrl = `${config.publicUrl}/console`
  app.log.info({ console: consoleUrl }, `the console is at ${consoleUrl}`)
  // Why on a terminal too: the JSON lines are for collectors; a person at `make run` wants the address.
  if (process.stderr.isTTY) process.stderr.write(`\n  Tessera is running. The console: ${consoleUrl}\n\n`)
  // Why after listening: the library is loaded on first use (webauthn.ts), and this keeps that first
  // passkey request from waiting for it without delaying the start.
  preloadWebauthn().catch((err: unknown) => app.log.warn({ err }, 'could not preload the WebAuthn library'))
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err)
  process.exit(1)
})
