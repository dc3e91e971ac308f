// A reference point for the gateway benchmark: the bare, tuned single-threaded Node proxy the
// issue describes (undici keep-alive pool, `.pipe()`), with no routing, checks or logging.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const pool = new Pool(process.argv[2], { connections: 128, pipelining: 1 });
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host']);

const server = http.createServer((req, res) => {
  const headers: Record<string, string | string[] | undefined> = {};
  for (const name in req.headers) if (!HOP.has(name)) headers[name] = req.headers[name];
  pool.request({ path: req.url!, method: req.method as 'POST', headers, body: req.headers['content-length'] ? req : null }).then(
    (up) => {
      const out: Record<string, string | string[] | undefined> = {};
      for (const name in up.headers) if (!HOP.has(name)) out[name] = up.headers[name];
      res.writeHead(up.statusCode, out);
      up.body.pipe(res);
    },
    () => {
      res.writeHead(502);
      res.end();
    },
  );
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on('message', (m) => {
  if (m === 'cpu') process.send!(process.cpuUsage());
});
process.on('disconnect', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
