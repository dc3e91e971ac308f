// Following a Server-Sent Events stream of the Agents API (a run's events, a seeding run's
// progress). EventSource cannot send the bearer token, so this reads the answer of a fetch as an
// event stream (the HTML standard's parsing: `event`, `data`, `id`, `retry`, comments ignored)
// and, when the connection drops before the stream has said all the screen needs, connects again
// after the `retry` the server asked for, sending the Last-Event-ID it has, so that the server
// sends only what came after it.
import { ApiProblem, type Api, type ProblemDocument } from './api.ts';
import { toProblem } from './ui.tsx';

export interface StreamEvent {
  id: string;
  event: string;
  data: string;
}

export type StreamState = 'live' | 'reconnecting' | 'done';

export interface FollowOptions {
  /** Each event, in order; answers true for the last one the screen needs (the stream then stops). */
  onEvent(event: StreamEvent): boolean | undefined;
  /** Connected, dropped (with why, if the API said), or done. */
  onState?(state: StreamState, problem?: ProblemDocument): void;
  /** Resume after this event (what the screen already has). */
  lastEventId?: string;
  signal: AbortSignal;
}

/** The longest wait between two attempts after failures in a row. */
const MAX_RETRY_MS = 30_000;

/** Parses an event stream's lines into events; `push` takes text as it arrives, in any pieces. */
export class EventStreamParser {
  lastEventId: string;
  retryMs: number | undefined;
  private buffer = '';
  private event = '';
  private data: string[] = [];
  private readonly dispatch: (e: StreamEvent) => void;

  constructor(lastEventId: string, dispatch: (e: StreamEvent) => void) {
    this.lastEventId = lastEventId;
    this.dispatch = dispatch;
  }

  push(text: string): void {
    this.buffer += text;
    for (;;) {
      const end = this.buffer.search(/\r\n|\r|\n/);
      // A lone \r at the end may be the first half of \r\n: wait for the next piece.
      if (end < 0 || (end === this.buffer.length - 1 && this.buffer[end] === '\r')) return;
      const line = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + (this.buffer.startsWith('\r\n', end) ? 2 : 1));
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) this.dispatch({ id: this.lastEventId, event: this.event || 'message', data: this.data.join('\n') });
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.lastEventId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** One connection: true once the screen has all it needs (or the server has nothing more: 204). */
async function readOnce(api: Api, path: string, parser: EventStreamParser, options: FollowOptions, done: () => boolean): Promise<boolean> {
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (parser.lastEventId) headers['last-event-id'] = parser.lastEventId;
  const res = await api.open(path, { headers, signal: options.signal });
  if (res.status === 204 || !res.body) return true;
  options.onState?.('live');
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { value, done: ended } = await reader.read();
      if (ended) return done();
      parser.push(value);
      if (done()) return true;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/**
 * Follows `path` until the screen has its last event, the server answers 204, the API refuses
 * (a 4xx problem, which `onState` is told), or `signal` aborts. A drop or a 5xx is retried.
 */
export async function followEvents(api: Api, path: string, options: FollowOptions): Promise<void> {
  let finished = false;
  let heard = false;
  const parser = new EventStreamParser(options.lastEventId ?? '', (e) => {
    heard = true;
    if (!finished && options.onEvent(e)) finished = true;
  });
  let failures = 0;
  while (!options.signal.aborted) {
    heard = false;
    let problem: ProblemDocument | undefined;
    try {
      if (await readOnce(api, path, parser, options, () => finished)) {
        options.onState?.('done');
        return;
      }
    } catch (err) {
      if (options.signal.aborted) return;
      problem = toProblem(err);
      if (err instanceof ApiProblem && problem.status >= 400 && problem.status < 500) {
        options.onState?.('done', problem);
        return;
      }
    }
    failures = heard ? 1 : failures + 1;
    options.onState?.('reconnecting', problem);
    await sleep(Math.min(MAX_RETRY_MS, (parser.retryMs ?? 1_000) * 2 ** (failures - 1)), options.signal);
  }
}
