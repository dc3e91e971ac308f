// The Prometheus endpoint of one process: `GET /metrics` in the text exposition format, on its
// own port (METRICS_PORT, loopback unless METRICS_HOST says otherwise), apart from the public
// listeners so that it is never reachable through the ingress that serves them.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { listen } from '../listen.ts';
import type { Logger } from '../log.ts';

export interface MetricsListenerOptions {
  host: string;
  port: number;
  registry: Registry;
  logger: Logger;
}

export interface MetricsListener {
  readonly url: string;
  close(): Promise<void>;
}

async function answer(req: http.IncomingMessage, res: http.ServerResponse, options: MetricsListenerOptions): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== '/metrics') {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the metrics are at /metrics\n');
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
    return;
  }
  try {
    const body = await options.registry.metrics();
    res.writeHead(200, { 'content-type': options.registry.contentType, 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : body);
  } catch (err) {
    options.logger.error({ err }, 'metrics: collecting failed');
    res.writeHead(500, { 'content-type': 'text/plain' }).end('collecting the metrics failed\n');
  }
}

export async function startMetricsListener(options: MetricsListenerOptions): Promise<MetricsListener> {
  const server = http.createServer((req, res) => void answer(req, res, options));
  server.keepAliveTimeout = 5_000;
  // A port in use is one line naming METRICS_PORT (listen.ts), not a stack trace.
  await listen(server, { host: options.host, port: options.port, settings: { host: 'METRICS_HOST', port: 'METRICS_PORT' } });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}/metrics`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
