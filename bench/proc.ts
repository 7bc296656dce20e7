// What /proc says about the server under test: CPU ticks and resident memory, of one process or of a
// process with its children (the workers of WORKERS=n).
import { readFileSync, readdirSync } from 'node:fs'

/** CPU ticks used so far by one process (0 when it is gone). */
export function ticksOf(pid: number): number {
  try {
    const afterName = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]
    if (afterName === undefined) return 0
    const fields = afterName.split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

/** The process and its direct children (a cluster primary and its workers). */
export function withChildren(pid: number): number[] {
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)
    return [pid, ...kids.map(Number)]
  } catch {
    return [pid]
  }
}

/** Resident memory of one process in MB (0 when it is gone). */
export function rssOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
  } catch {
    return 0
  }
}

/** The node flags of `npm start` (heap sizing), so a bench runs the server exactly as it is started. */
export function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }
  const m = /\bnode ((?:--\S+ )*)dist\/server\.js/.exec(pkg.scripts.start)
  if (!m) throw new Error('package.json start script: expected `node [--flags] dist/server.js`')
  const [, flags = ''] = m
  return flags.split(' ').filter(Boolean)
}

/** CPU ticks used so far by every PostgreSQL process of the machine. */
export function postgresTicks(): number {
  let ticks = 0
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').startsWith('postgres')) ticks += ticksOf(Number(entry))
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks
}
