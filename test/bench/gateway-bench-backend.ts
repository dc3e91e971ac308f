// The backend of the gateway benchmark: a plain single-threaded Node HTTP server. POST answers a
// JSON-RPC result of about 1 KB; GET /sse streams timestamped events on demand. Prints its port.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const RESULT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  result: {
    content: [{ type: 'text', text: 'x'.repeat(900) }],
    isError: false,
  },
});

const server = http.createServer((req, res) => {
  if (req.method === 'POST') {
    req.on('data', () => undefined);
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(RESULT) });
      res.end(RESULT);
    });
    return;
  }
  if (req.url?.startsWith('/sse')) {
    // Events every `gap` ms, each carrying the wall-clock time it was written.
    const url = new URL(req.url, 'http://x');
    const count = Number(url.searchParams.get('count') ?? 200);
    const gap = Number(url.searchParams.get('gap') ?? 10);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    let sent = 0;
    const timer = setInterval(() => {
      sent++;
      res.write(`id: ${sent}\nevent: message\ndata: {"n":${sent},"t":${performance.timeOrigin + performance.now()}}\n\n`);
      if (sent >= count) {
        clearInterval(timer);
        res.end();
      }
    }, gap);
    res.on('close', () => clearInterval(timer));
    return;
  }
  res.writeHead(404);
  res.end();
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on('message', (m) => {
  if (m === 'cpu') process.send!(process.cpuUsage());
});
process.on('disconnect', () => process.exit(0));
