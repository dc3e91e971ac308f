// Stuck clients against every public listener: CONNECTIONS sockets per listener send a request
// head announcing a body and then nothing (the issue's "500 connections that sent a head and no
// body"). Prints, per listener, how many were answered 408, closed, and still open after the
// body deadline, and when the last one closed.
// Run: ./node_modules/.bin/node test/bench/stuck-clients.bench.ts
//      (CONNECTIONS=500, BODY_TIMEOUT_MS=2000, REQUEST_TIMEOUT_MS=10000 by default)
import net from 'node:net';
import { startTestPlatform } from '../support/platform.ts';

const CONNECTIONS = Number(process.env.CONNECTIONS ?? 500);
const BODY_TIMEOUT_MS = process.env.BODY_TIMEOUT_MS ?? '2000';
const REQUEST_TIMEOUT_MS = process.env.REQUEST_TIMEOUT_MS ?? '10000';

/** A body-reading endpoint per listener, needing no credentials where one exists. */
const TARGETS = {
  gateway: '/brain/oauth/token',
  auth: '/token',
  api: '/organizations',
  web: '/api/v1/search',
} as const;

interface Outcome {
  status408: number;
  otherStatus: number;
  closed: number;
  lastClosedMs: number;
}

function stuck(url: string, path: string, started: number): Promise<{ status: string; closedAt: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: 100\r\n\r\n`,
      );
    });
    let first = '';
    socket.on('data', (d: Buffer) => (first ||= d.toString('latin1', 0, 12)));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ status: first.slice(9, 12), closedAt: performance.now() - started }));
  });
}

const platform = await startTestPlatform({ BODY_TIMEOUT_MS, REQUEST_TIMEOUT_MS });
try {
  console.log(
    `${CONNECTIONS} head-only connections per listener, BODY_TIMEOUT_MS=${BODY_TIMEOUT_MS}, REQUEST_TIMEOUT_MS=${REQUEST_TIMEOUT_MS}`,
  );
  for (const [name, path] of Object.entries(TARGETS) as [keyof typeof TARGETS, string][]) {
    const started = performance.now();
    const results: { status: string; closedAt: number }[] = [];
    const all = Array.from({ length: CONNECTIONS }, () =>
      stuck(platform.edge.listeners[name].url, path, started).then((r) => results.push(r)),
    );
    // Counted once the deadline has long passed: what is still open then would stay open.
    await Promise.race([Promise.all(all), new Promise((r) => setTimeout(r, Number(BODY_TIMEOUT_MS) * 3 + 5_000))]);
    const outcome: Outcome = {
      status408: results.filter((r) => r.status === '408').length,
      otherStatus: results.filter((r) => r.status && r.status !== '408').length,
      closed: results.length,
      lastClosedMs: Math.round(Math.max(0, ...results.map((r) => r.closedAt))),
    };
    console.log(
      `${name.padEnd(8)} ${path.padEnd(22)} 408: ${outcome.status408}  other answer: ${outcome.otherStatus}  closed: ${outcome.closed}/${CONNECTIONS}  still open: ${CONNECTIONS - outcome.closed}  last closed after ${outcome.lastClosedMs} ms`,
    );
  }
} finally {
  await platform.stop(0);
  // Sockets a listener never closed would keep the process alive.
  process.exit(0);
}
