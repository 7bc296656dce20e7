import t from 'tap'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DataDirLockedError, isRunning, LOCK_FILE_NAME, lockDataDir } from '../../src/db/data-dir-lock.js'
import { openDatabase } from '../../src/db/connect.js'

function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-lock-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function holder(pid: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    pid,
    startTicks: null,
    bootId: null,
    hostname: 'h',
    since: 'then',
    command: 'x',
    ...extra,
  })
}

t.test('a directory has one holder; release frees it', async (t) => {
  const dir = tempDir(t)
  const lock = await lockDataDir(dir)
  t.ok(existsSync(join(dir, LOCK_FILE_NAME)))
  t.equal(JSON.parse(readFileSync(lock.file, 'utf8')).pid, process.pid, 'the file names its holder')
  const again = await lockDataDir(dir).catch((e: unknown) => e)
  t.type(again, DataDirLockedError, 'a second open in the same process is refused too')
  t.match((again as Error).message, dir)
  await lock.release()
  await lock.release()
  t.notOk(existsSync(lock.file), 'released: the file is gone')
  const next = await lockDataDir(dir)
  await next.release()
})

t.test('a lock naming a live process is refused at once, with the pid and what to do', async (t) => {
  const dir = tempDir(t)
  const child = spawn('sleep', ['30'], { stdio: 'ignore' })
  t.teardown(() => child.kill('SIGKILL'))
  const ticks = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[19] ?? null
  writeFileSync(join(dir, LOCK_FILE_NAME), holder(child.pid as number, { startTicks: ticks }))
  const err = (await lockDataDir(dir).catch((e: unknown) => e)) as DataDirLockedError
  t.type(err, DataDirLockedError)
  t.equal(err.holder.pid, child.pid)
  t.match(err.message, new RegExp(`pid ${child.pid}`))
  t.match(err.message, /DATABASE_URL=postgres/)
  t.equal(JSON.parse(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')).pid, child.pid, 'left untouched')
})

t.test('stale locks are taken over at once: dead pid, reused pid, our own former pid, garbage', async (t) => {
  const dead = spawn('true', { stdio: 'ignore' })
  await new Promise((r) => dead.on('exit', r))
  const live = spawn('sleep', ['30'], { stdio: 'ignore' })
  t.teardown(() => live.kill('SIGKILL'))
  const cases: [string, string][] = [
    ['a process that no longer runs (kill -9)', holder(dead.pid as number)],
    [
      'a pid now used by another process (start time differs)',
      holder(live.pid as number, { startTicks: '1' }),
    ],
    ['a pid from before a reboot', holder(live.pid as number, { bootId: 'another-boot' })],
    ['this process pid, left by a former process (containers reuse pid 1)', holder(process.pid)],
    ['an unreadable file', 'not json'],
  ]
  for (const [name, content] of cases) {
    const dir = tempDir(t)
    writeFileSync(join(dir, LOCK_FILE_NAME), content)
    const lock = await lockDataDir(dir)
    t.equal(JSON.parse(readFileSync(lock.file, 'utf8')).pid, process.pid, name)
    await lock.release()
  }
  t.equal(
    isRunning(JSON.parse(holder(live.pid as number)) as never),
    true,
    'a live pid with no start time runs',
  )
})

t.test('openDatabase on disk holds the lock until close; memory:// takes none', async (t) => {
  const dir = tempDir(t)
  const opened = await openDatabase(undefined, { dataDir: dir })
  const second = await openDatabase(undefined, { dataDir: dir }).catch((e: unknown) => e)
  t.type(second, DataDirLockedError, 'a second owner never opens the files')
  await opened.close()
  t.notOk(existsSync(join(dir, LOCK_FILE_NAME)))
  const m1 = await openDatabase('memory://', { dataDir: dir })
  const m2 = await openDatabase('memory://', { dataDir: dir })
  t.notOk(existsSync(join(dir, LOCK_FILE_NAME)), 'memory:// has no directory to share')
  await m1.close()
  await m2.close()
})

t.test('the lock file names the script, never its arguments (they may hold secrets)', async (t) => {
  const dir = tempDir(t)
  const argv = process.argv
  process.argv = [
    argv[0] as string,
    '/repo/src/cli.ts',
    'tenant',
    'create',
    '--admin-password',
    'S3cret-pass',
  ]
  t.teardown(() => (process.argv = argv))
  const lock = await lockDataDir(dir)
  const text = readFileSync(lock.file, 'utf8')
  t.equal(JSON.parse(text).command, 'cli.ts')
  t.notMatch(text, 'S3cret-pass')
  await lock.release()
})
