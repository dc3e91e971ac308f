// The dashboard on the web listener, `{web_url}/app`: one HTML shell for every path under it
// (the browser routes), and the compiled script and style sheet. The shell names the platform's
// URLs in a <meta> element, since the CSP allows no inline script; the script fetches only the
// authorization server (token endpoint) and the Agents API, which the CSP's connect-src says.
import type { IncomingMessage } from 'node:http';
import type { EdgeConfig } from '../config.ts';
import { escapeHtml } from '../http/escape-html.ts';
import { pageSecurityHeaders } from '../http/page-headers.ts';
import { sendProblem, sendText } from '../http/respond.ts';
import type { RouteContext, Router } from '../http/router.ts';
import type { Asset, DashboardBundle } from './bundle.ts';
import { DASHBOARD_CLIENT_ID, DASHBOARD_PATH, dashboardUrls } from './oauth-client.ts';

/** What the browser code needs to know, read from `<meta name="mindgate-dashboard">`. */
export interface DashboardSettings {
  clientId: string;
  basePath: string;
  authUrl: string;
  apiUrl: string;
  gatewayUrl: string;
  callbackUrl: string;
  signedOutUrl: string;
}

export function dashboardSettings(config: EdgeConfig): DashboardSettings {
  const urls = dashboardUrls(config.publicUrls.web);
  return {
    clientId: DASHBOARD_CLIENT_ID,
    basePath: DASHBOARD_PATH,
    authUrl: config.publicUrls.auth,
    apiUrl: config.publicUrls.api,
    gatewayUrl: config.publicUrls.gateway,
    callbackUrl: urls.callback,
    signedOutUrl: urls.signedOut,
  };
}

function shell(settings: DashboardSettings, bundle: DashboardBundle): string {
  const assets = `${DASHBOARD_PATH}/assets`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="mindgate-dashboard" content="${escapeHtml(JSON.stringify(settings))}">
<title>Mindgate dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assets}/${bundle.style.name}">
<script type="module" src="${assets}/${bundle.script.name}"></script>
</head>
<body>
<div id="root"><main><p>Loading the dashboard…</p><noscript><p>The dashboard needs JavaScript.</p></noscript></main></div>
</body>
</html>
`;
}

function acceptsGzip(req: IncomingMessage): boolean {
  const header = req.headers['accept-encoding'];
  return typeof header === 'string' && /\bgzip\b(?!;q=0(\.0*)?\b)/.test(header);
}

function sendAsset(c: RouteContext, file: Asset): void {
  const gzip = acceptsGzip(c.req);
  const headers: Record<string, string | number> = {
    'content-type': file.type,
    'cache-control': 'public, max-age=31536000, immutable',
    etag: file.etag,
    vary: 'Accept-Encoding',
    'x-content-type-options': 'nosniff',
  };
  if (c.req.headers['if-none-match'] === file.etag) {
    c.res.writeHead(304, headers);
    c.res.end();
    return;
  }
  const body = gzip ? file.gzip : file.body;
  c.res.writeHead(200, { ...headers, 'content-length': body.length, ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
  c.res.end(c.req.method === 'HEAD' ? undefined : body);
}

/** Registers `/app`, `/app/*` and `/app/assets/<file>` on the web listener's router. */
export function registerDashboardRoutes(router: Router, config: EdgeConfig, bundle: DashboardBundle): void {
  const settings = dashboardSettings(config);
  const html = shell(settings, bundle);
  const origins = [...new Set([config.publicUrls.auth, config.publicUrls.api].map((u) => new URL(u).origin))].join(' ');
  const headers = {
    ...pageSecurityHeaders({ script: "'self'", style: "'self'", img: "'self' data:", connect: origins, formAction: "'none'" }),
    'cache-control': 'no-cache',
  };
  const files = new Map([bundle.script, bundle.style, ...bundle.chunks].map((f) => [f.name, f]));
  router.get(`${DASHBOARD_PATH}/assets/:file`, (c) => {
    const file = files.get(c.params.file ?? '');
    if (!file) {
      sendProblem(c.res, { title: 'Not Found', status: 404, detail: 'No such dashboard file.', instance: c.path });
      return;
    }
    sendAsset(c, file);
  });
  const page = (c: RouteContext) => sendText(c.res, 200, html, 'text/html; charset=utf-8', headers);
  router.get(DASHBOARD_PATH, page);
  router.get(`${DASHBOARD_PATH}/*rest`, page);
}
