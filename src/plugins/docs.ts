import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import document from '../../generated/openapi.json' with { type: 'json' }

/** The explorer's name: in the page title and its top bar, instead of the framework's. */
export const EXPLORER_TITLE = 'Tessera API explorer'

// Why inline strings and not files: the service is bundled into dist/server.js, where files next to
// this module do not exist. The CSS and JS are served from /docs/static/theme/ ('self' in the CSP).
const MARK =
  '<rect x="0" y="0" width="14" height="14" rx="2" fill="#62a8ea"/>' +
  '<rect x="18" y="0" width="14" height="14" rx="2" fill="#ffffff"/>' +
  '<rect x="0" y="18" width="14" height="14" rx="2" fill="#ffffff"/>' +
  '<rect x="18" y="18" width="14" height="14" rx="2" fill="#62a8ea"/>'

/** The top bar's logo: the mark and the explorer's name, white on the dark bar. */
const LOGO_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="40" viewBox="0 0 300 40">' +
  `<g transform="translate(2 4)">${MARK}</g>` +
  '<text x="46" y="28" font-family="sans-serif" font-size="22" font-weight="700" fill="#ffffff">Tessera</text>' +
  '<text x="140" y="28" font-family="sans-serif" font-size="18" fill="#c8d1dc">API explorer</text>' +
  '</svg>'

const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32">' +
  `<rect width="32" height="32" rx="4" fill="#1b1b1b"/><g transform="translate(4 4) scale(0.75)">${MARK}</g></svg>`

const THEME_CSS = `
.tessera-topbar { background-color: #1b1b1b; padding: 10px 0; }
.tessera-topbar .tessera-topbar-wrapper {
  box-sizing: border-box; margin: 0 auto; max-width: 1460px; padding: 0 20px; width: 100%;
  display: flex; align-items: center;
}
.tessera-topbar img { display: block; height: 40px; width: auto; }
`

/**
 * Runs in the page, after swagger-ui's scripts and before it renders: puts Tessera's top bar above
 * the explorer. Plain DOM; the logo is a data: image (img-src allows data:).
 */
const THEME_JS = `(function () {
  var bar = document.createElement('header');
  bar.className = 'tessera-topbar';
  bar.setAttribute('role', 'banner');
  var wrapper = document.createElement('div');
  wrapper.className = 'tessera-topbar-wrapper';
  var logo = document.createElement('img');
  logo.src = ${JSON.stringify(`data:image/svg+xml;base64,${Buffer.from(LOGO_SVG).toString('base64')}`)};
  logo.alt = ${JSON.stringify(EXPLORER_TITLE)};
  logo.width = 300;
  logo.height = 40;
  wrapper.appendChild(logo);
  bar.appendChild(wrapper);
  document.body.insertBefore(bar, document.getElementById('swagger-ui'));
})();
`

/**
 * The explorer's CSP minus `upgrade-insecure-requests`. Why: over plain HTTP on any host but localhost
 * (a container's or a LAN address, `HOST=0.0.0.0`) that directive makes the browser fetch the page's own
 * scripts and styles, and "Try it out" calls, over HTTPS from a server that speaks HTTP, so nothing
 * loads. Served over HTTPS the page's same-origin requests are HTTPS anyway.
 */
export function withoutUpgradeInsecureRequests(csp: string): string {
  return csp
    .split(';')
    .map((d) => d.trim())
    .filter((d) => d !== '' && d !== 'upgrade-insecure-requests')
    .join('; ')
    .concat(';')
}

/**
 * Serves the checked-in document as is: /docs (explorer), /docs/json, /docs/yaml.
 *
 * The explorer: "Try it out" calls the origin that served the page (the document's `servers` is
 * relative), "Authorize" offers every security scheme of the document and keeps what was entered
 * across reloads (persistAuthorization, in the browser's localStorage).
 *
 * Branding: swagger-ui's BaseLayout (its standalone layout's top bar carries the framework's logo and
 * an "Explore" box that loads any other document into the page), under Tessera's own top bar.
 *
 * CSP: helmet's header (security-headers plugin) is on every response; @fastify/swagger-ui replaces it
 * on its own routes only (/docs/*, `staticCSP`) with the sources the explorer needs: same-origin
 * scripts, styles and fetches, data: images; no upgrade-insecure-requests (see above). The /api routes
 * keep helmet's.
 */
async function docsPlugin(app: FastifyInstance): Promise<void> {
  await app.register(swagger, { mode: 'static', specification: { document: document as never } })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    transformStaticCSP: withoutUpgradeInsecureRequests,
    uiConfig: {
      layout: 'BaseLayout',
      deepLinking: true,
      persistAuthorization: true,
      tryItOutEnabled: true,
    },
    theme: {
      title: EXPLORER_TITLE,
      css: [{ filename: 'tessera.css', content: THEME_CSS }],
      js: [{ filename: 'tessera.js', content: THEME_JS }],
      favicon: [
        {
          filename: 'favicon.svg',
          rel: 'icon',
          sizes: 'any',
          type: 'image/svg+xml',
          content: Buffer.from(FAVICON_SVG),
        },
      ],
    },
  })
}

export default fp(docsPlugin, { name: 'docs' })
