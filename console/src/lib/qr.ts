/**
 * The QR code the API answers as SVG markup, as an image source. Why an <img> with a data: URL and not
 * the markup in the page: an image cannot run script, whatever the SVG holds.
 */
export function qrSource(svg: string): string {
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`
}
