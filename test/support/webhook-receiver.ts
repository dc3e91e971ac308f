// A webhook receiver for tests: a real HTTP server on 127.0.0.1, port 0, that records every
// request and checks its signature with the `standardwebhooks` package (the reference
// implementation, independent of ours). It can be told to fail (a status), to answer slowly, or to
// hold requests unanswered until their sender goes away, and counts how many it holds at once.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  headers: Record<string, string>;
  body: string;
  /** The parsed body, when the signature verified with one of the secrets. */
  verified?: { type: string; timestamp: string; data: Record<string, unknown> };
  /** Which of the secrets verified it (index into `secrets`), or -1. */
  verifiedWith: number;
  /** The status answered. */
  status: number;
  at: number;
}

export interface WebhookReceiver {
  url: string;
  /** Requests answered, in the order answered. */
  received: ReceivedWebhook[];
  /** Every request as it arrived, answered or not (`status` 0 until answered). */
  arrived: ReceivedWebhook[];
  /** Requests are held unanswered until their connection closes (a sender that died), or release(). */
  holding: boolean;
  /** Answers every request held so far, as if it had not been held (holding stays as it is). */
  release(): void;
  /** Requests held unanswered right now. */
  readonly held: number;
  /** Secrets tried in order when verifying. */
  secrets: string[];
  /** Status answered from now on (200 by default). */
  status: number;
  /** Milliseconds each answer waits. */
  delayMs: number;
  /** The most requests held at once. */
  maxConcurrent: number;
  /** Resolves once `count` requests matching `filter` have arrived. */
  waitFor(count: number, filter?: (r: ReceivedWebhook) => boolean, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  /** Resolves once `count` requests matching `filter` have arrived, answered or not. */
  waitForArrival(count: number, filter?: (r: ReceivedWebhook) => boolean, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(path = '/hooks'): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const arrived: ReceivedWebhook[] = [];
  const waiters = new Set<() => void>();
  const releases = new Set<() => void>();
  let current = 0;
  const receiver = {
    received,
    arrived,
    holding: false,
    secrets: [] as string[],
    status: 200,
    delayMs: 0,
    maxConcurrent: 0,
  } as WebhookReceiver;
  const server = http.createServer(async (req, res) => {
    current++;
    receiver.maxConcurrent = Math.max(receiver.maxConcurrent, current);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    let verified: ReceivedWebhook['verified'];
    let verifiedWith = -1;
    for (const [i, secret] of receiver.secrets.entries()) {
      try {
        verified = new Webhook(secret).verify(body, headers) as ReceivedWebhook['verified'];
        verifiedWith = i;
        break;
      } catch {}
    }
    const entry: ReceivedWebhook = { headers, body, verified, verifiedWith, status: 0, at: Date.now() };
    arrived.push(entry);
    for (const w of waiters) w();
    if (receiver.holding) {
      let release = () => {};
      const released = await new Promise<boolean>((resolve) => {
        release = () => resolve(true);
        releases.add(release);
        res.once('close', () => resolve(false));
      });
      releases.delete(release);
      if (!released) {
        current--;
        return;
      }
    }
    if (receiver.delayMs > 0) await new Promise((r) => setTimeout(r, receiver.delayMs));
    entry.status = req.url === path ? receiver.status : 404;
    received.push(entry);
    current--;
    res.writeHead(entry.status, { 'content-type': 'text/plain' }).end(entry.status < 300 ? 'ok' : `failing with ${entry.status}`);
    for (const w of waiters) w();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  receiver.url = `http://127.0.0.1:${port}${path}`;
  const waitIn =
    (list: ReceivedWebhook[]) =>
    (count: number, filter: (r: ReceivedWebhook) => boolean = () => true, timeoutMs = 30_000) =>
      new Promise<ReceivedWebhook[]>((resolve, reject) => {
        const check = () => {
          const matching = list.filter(filter);
          if (matching.length < count) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(matching);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`waited ${timeoutMs} ms for ${count} webhooks, got ${list.filter(filter).length}`));
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
  receiver.release = () => {
    for (const release of [...releases]) release();
  };
  Object.defineProperty(receiver, 'held', { get: () => releases.size });
  receiver.waitFor = waitIn(received);
  receiver.waitForArrival = waitIn(arrived);
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
