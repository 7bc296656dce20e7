import type { Redis } from 'ioredis'

/**
 * A Redis connection for counters that must never make a request wait on Redis (rate limits, account
 * throttling): with no offline queue a command fails at once while Redis is down, and `commandTimeoutMs`
 * bounds one that a stalled Redis never answers. Reconnects in the background.
 */
export async function connectRedis(url: string, commandTimeoutMs: number): Promise<Redis> {
  // Why lazy: ioredis is only loaded where counters are shared.
  const { Redis: RedisClient } = await import('ioredis')
  const redis = new RedisClient(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    commandTimeout: commandTimeoutMs,
    retryStrategy: (times: number) => Math.min(times * 200, 2000),
  })
  redis.on('error', () => {
    // Why: connection errors are expected while Redis is down; health reports it, the log would flood.
  })
  return redis
}
