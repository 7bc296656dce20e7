import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from 'react'
import type { SortParam } from './ui/List'

// A router of a few lines instead of a library: every screen and every item's page has its own URL under
// /console (/users, /users/{id}), App.tsx matches the path, and the console needs only push, back/forward
// and links.
const BASE = '/console'

function current(): string {
  const path = window.location.pathname.slice(BASE.length) || '/'
  return path.length > 1 ? path.replace(/\/$/, '') : path
}

const listeners = new Set<() => void>()

/** Goes to a screen (`to` below /console, with its query), as a new history entry unless `replace`. */
export function navigate(to: string, replace = false): void {
  const url = BASE + (to === '/' ? '' : to)
  if (replace) window.history.replaceState(null, '', url)
  else window.history.pushState(null, '', url)
  listeners.forEach((l) => l())
}

/** The path below /console ('/' for the overview) and the query, re-rendered on every change. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0)
  useEffect(() => {
    const update = () => setTick((n) => n + 1)
    listeners.add(update)
    window.addEventListener('popstate', update)
    return () => {
      listeners.delete(update)
      window.removeEventListener('popstate', update)
    }
  }, [])
  return { path: current(), query: new URLSearchParams(window.location.search) }
}

/**
 * One value of the query (a list's sort), and a setter that changes it in the URL as a new history entry,
 * keeping the path and the other values (a search, a filter), so reload and Back keep both.
 */
export function useSearchParam(name: string): [string | null, (value: string | null) => void] {
  const { path, query } = useLocation()
  const set = (value: string | null) => {
    const next = new URLSearchParams(window.location.search)
    if (value === null || value === '') next.delete(name)
    else next.set(name, value)
    navigate(next.size ? `${path}?${next}` : path)
  }
  return [query.get(name), set]
}

/** A List's sort kept in the URL's `name` (`sort` unless a screen has two lists), for its `sort` prop. */
export function useUrlSort(name = 'sort'): SortParam {
  const [value, onChange] = useSearchParam(name)
  return { value, onChange }
}

/** An <a> with a real href (open in a new tab works) that navigates in place on a plain click. */
export function Link({ to, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
    e.preventDefault()
    navigate(to)
  }
  return <a href={BASE + (to === '/' ? '' : to)} onClick={onClick} {...rest} />
}
