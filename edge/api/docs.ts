// The interactive reference at /docs: Swagger UI served from the installed swagger-ui-dist
// package, so it works with no network; no inline script, so a strict CSP applies.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Router } from '../http/router.ts';
import { sendText } from '../http/respond.ts';

const require = createRequire(import.meta.url);

export function registerDocs(router: Router, options: { title: string; specUrl: string }): void {
  const dir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  const assets: Record<string, { file: string; type: string }> = {
    'swagger-ui.css': { file: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
    'swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', type: 'text/javascript; charset=utf-8' },
  };
  const cache = new Map<string, string>();
  const csp = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title}</title><link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><noscript><p>The interactive reference needs JavaScript. The description itself is at <a href="${options.specUrl}">${options.specUrl}</a>.</p></noscript>
<main id="swagger-ui"></main><script src="/docs/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body></html>`;
  const init = `window.ui = SwaggerUIBundle({ url: ${JSON.stringify(options.specUrl)}, dom_id: '#swagger-ui', deepLinking: true });\n`;

  router.get('/docs', ({ res }) => sendText(res, 200, html, 'text/html; charset=utf-8', { 'content-security-policy': csp, 'cache-control': 'no-cache' }));
  router.get('/docs/init.js', ({ res }) => sendText(res, 200, init, 'text/javascript; charset=utf-8', { 'cache-control': 'no-cache' }));
  router.get('/docs/:asset', ({ res, params }) => {
    const asset = assets[params.asset];
    if (!asset) return sendText(res, 404, 'not found', 'text/plain; charset=utf-8');
    let body = cache.get(asset.file);
    if (body === undefined) {
      body = fs.readFileSync(path.join(dir, asset.file), 'utf8');
      cache.set(asset.file, body);
    }
    sendText(res, 200, body, asset.type, { 'cache-control': 'public, max-age=3600' });
  });
}
