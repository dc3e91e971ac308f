// The dashboard's event stream reader (edge/dashboard/app/event-stream.ts) against a real HTTP
// server: the standard's parsing in any pieces, the bearer token sent, a connection dropped
// mid-stream resumed with Last-Event-ID (so the server sends only what came after), 204 as the
// end, and a 4xx problem reported instead of retried.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApi } from '../../edge/dashboard/app/api.ts';
import { EventStreamParser, followEvents, type StreamEvent, type StreamState } from '../../edge/dashboard/app/event-stream.ts';
import type { DashboardSettings } from '../../edge/dashboard/app/settings.ts';

let server: http.Server | undefined;

afterEach(async () => {
  if (!server) return;
  server.closeAllConnections();
  await new Promise((resolve) => server!.close(resolve));
  server = undefined;
});

async function serve(handler: http.RequestListener): Promise<string> {
  server = http.createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const apiFor = (apiUrl: string) => createApi({ apiUrl } as DashboardSettings);

describe('the event stream parser', () => {
  it('reads events, multi-line data, ids and retry from pieces split anywhere, skipping comments', () => {
    const seen: StreamEvent[] = [];
    const parser = new EventStreamParser('', (e) => seen.push(e));
    const text = ': hello\r\nretry: 250\r\n\r\nid: 7\r\nevent: step\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata:plain\n\nid: 9\rdata: x\r\r\n';
    for (const piece of text.match(/[\s\S]{1,3}/g)!) parser.push(piece);
    expect(seen).toEqual([
      { id: '7', event: 'step', data: '{"a":\n1}' },
      { id: '7', event: 'message', data: 'plain' },
      { id: '9', event: 'message', data: 'x' },
    ]);
    expect(parser.retryMs).toBe(250);
    expect(parser.lastEventId).toBe('9');
  });
});

describe('following an event stream', () => {
  it('resumes with Last-Event-ID after the connection drops, and stops at the last event it needs', async () => {
    const asked: { auth?: string; last?: string }[] = [];
    const url = await serve((req, res) => {
      asked.push({ auth: req.headers.authorization, last: req.headers['last-event-id'] as string | undefined });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (asked.length === 1) {
        res.write('retry: 10\n\nid: 1\nevent: status\ndata: {"status":"queued"}\n\nid: 2\nevent: status\ndata: {"status":"running"}\n\n');
        // The connection drops without the stream ending cleanly.
        setImmediate(() => res.socket?.destroy());
        return;
      }
      res.write('id: 3\nevent: step\ndata: {"index":0}\n\nid: 4\nevent: status\ndata: {"status":"succeeded"}\n\n');
    });
    const events: StreamEvent[] = [];
    const states: StreamState[] = [];
    await followEvents(apiFor(url), '/runs/r1/events', {
      signal: new AbortController().signal,
      onEvent: (e) => {
        events.push(e);
        return e.event === 'status' && JSON.parse(e.data).status === 'succeeded';
      },
      onState: (s) => states.push(s),
    });
    expect(events.map((e) => `${e.id} ${e.event}`)).toEqual(['1 status', '2 status', '3 step', '4 status']);
    expect(asked).toEqual([
      { auth: 'Bearer', last: undefined },
      { auth: 'Bearer', last: '2' },
    ]);
    expect(states).toEqual(['live', 'reconnecting', 'live', 'done']);
  });

  it('starts after the id it is given, and takes 204 as nothing more to come', async () => {
    const asked: (string | undefined)[] = [];
    const url = await serve((req, res) => {
      asked.push(req.headers['last-event-id'] as string | undefined);
      res.writeHead(204).end();
    });
    const states: StreamState[] = [];
    await followEvents(apiFor(url), '/runs/r1/events', {
      lastEventId: '5',
      signal: new AbortController().signal,
      onEvent: () => true,
      onState: (s) => states.push(s),
    });
    expect(asked).toEqual(['5']);
    expect(states).toEqual(['done']);
  });

  it("reports the API's problem for a refused stream, without retrying it", async () => {
    let calls = 0;
    const url = await serve((_req, res) => {
      calls += 1;
      res.writeHead(404, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ type: 'https://mindgate.dev/problems/not-found', title: 'Not Found', status: 404, detail: 'no such run' }));
    });
    const said: { state: StreamState; detail?: string }[] = [];
    await followEvents(apiFor(url), '/runs/nope/events', {
      signal: new AbortController().signal,
      onEvent: () => true,
      onState: (state, problem) => said.push({ state, detail: problem?.detail }),
    });
    expect(said).toEqual([{ state: 'done', detail: 'no such run' }]);
    expect(calls).toBe(1);
  });

  it('stops when the screen goes away', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('id: 1\ndata: first\n\n');
    });
    const stop = new AbortController();
    const events: string[] = [];
    await followEvents(apiFor(url), '/s', {
      signal: stop.signal,
      onEvent: (e) => {
        events.push(e.data);
        stop.abort();
        return false;
      },
    });
    expect(events).toEqual(['first']);
  });
});
