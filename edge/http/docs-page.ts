// The interactive API reference (Swagger UI) of the REST API and of the gateway. It works
// offline: its assets come from the installed swagger-ui-dist package, never from a CDN. There
// is no inline script or style, so the page runs under the platform's page security headers
// with a CSP that allows only its own origin (Swagger UI styles elements through the CSSOM,
// which style-src does not restrict).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { escapeHtml } from './escape-html.ts';
import { pageSecurityHeaders } from './page-headers.ts';
import type { Router } from './router.ts';

export interface DocsPageOptions {
  /** Page title. */
  title: string;
  /** URL (usually relative, `/openapi.json`) of the OpenAPI document the page renders. */
  openapiUrl: string;
  /** Where the page lives; assets go under `${prefix}/assets/`. */
  prefix?: string;
}

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE_HEADERS = {
  ...pageSecurityHeaders({ script: "'self'", style: "'self'", img: "'self' data:", connect: "'self'" }),
  'cache-control': 'no-cache',
};

let distDir: string | undefined;
const cache = new Map<string, Buffer>();

function asset(name: string): Buffer {
  let data = cache.get(name);
  if (!data) {
    distDir ??= path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
    data = fs.readFileSync(path.join(distDir, name));
    cache.set(name, data);
  }
  return data;
}

function pageHtml(options: DocsPageOptions, prefix: string): string {
  const spec = escapeHtml(options.openapiUrl);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(options.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${prefix}/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="${prefix}/assets/favicon-32x32.png">
</head><body><noscript><p>The interactive reference needs JavaScript. The description itself is at <code>${spec}</code>.</p></noscript>
<main id="swagger-ui"></main>
<script src="${prefix}/assets/swagger-ui-bundle.js"></script>
<script src="${prefix}/assets/init.js"></script>
</body></html>`;
}

export function addDocsPage(router: Router, options: DocsPageOptions): void {
  const prefix = options.prefix ?? '/docs';
  const html = pageHtml(options, prefix);
  const init = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({ url: ${JSON.stringify(options.openapiUrl)}, dom_id: '#swagger-ui', deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis], layout: 'BaseLayout' });
});\n`;
  router.get(prefix, ({ res }) => {
    res.writeHead(200, { ...PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(html) });
    res.end(res.req.method === 'HEAD' ? undefined : html);
  });
  router.get(`${prefix}/assets/:name`, ({ res, params }) => {
    let body: Buffer;
    let type: string;
    if (params.name === 'init.js') {
      body = Buffer.from(init);
      type = 'text/javascript; charset=utf-8';
    } else if (Object.hasOwn(ASSETS, params.name)) {
      body = asset(params.name);
      type = ASSETS[params.name];
    } else {
      const payload = JSON.stringify({ error: 'not_found', detail: 'No such asset.' });
      res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
      res.end(payload);
      return;
    }
    res.writeHead(200, {
      'content-type': type,
      'content-length': body.length,
      'cache-control': 'public, max-age=3600',
      'x-content-type-options': 'nosniff',
    });
    res.end(res.req.method === 'HEAD' ? undefined : body);
  });
}
