// The text colour on a tenant's brand colour (issue 44). Why computed, not chosen by the tenant: whatever the
// colour, the button's words must stay readable, and axe's contrast check (WCAG 2.x, 4.5:1) must pass.

/** WCAG 2.x relative luminance of `#rrggbb`, from 0 (black) to 1 (white). */
export function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  }
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5)
}

/** The WCAG contrast ratio of two luminances (1 to 21). */
export function contrast(a: number, b: number): number {
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)
}

/** Black or white, whichever contrasts more with `#rrggbb` (at least 4.58:1 for any colour). */
export function textOn(hex: string): '#000000' | '#ffffff' {
  const l = luminance(hex)
  return contrast(l, 0) >= contrast(l, 1) ? '#000000' : '#ffffff'
}
