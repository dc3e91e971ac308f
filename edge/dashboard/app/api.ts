// The Agents API as the dashboard calls it: the bearer token from auth.ts, one retry after a
// refresh when the token has expired, and every failure as an ApiProblem (RFC 9457) that the
// screens show as it is.
import { accessToken, refresh } from './auth.ts';
import type { DashboardSettings } from './settings.ts';

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: { loc: (string | number)[]; msg: string }[];
}

export class ApiProblem extends Error {
  readonly problem: ProblemDocument;
  constructor(problem: ProblemDocument) {
    super(problem.detail ?? problem.title);
    this.name = 'ApiProblem';
    this.problem = problem;
  }
}

export interface ApiAnswer<T> {
  status: number;
  data: T;
  etag: string | null;
}

/** A body sent as it is, in its own media type (a YAML document, JSON Lines, an uploaded file). */
export class RawBody {
  readonly content: string | Blob;
  readonly type: string;
  constructor(content: string | Blob, type: string) {
    this.content = content;
    this.type = type;
  }
}

export interface CallOptions {
  /** Sent as JSON, or as it is when a RawBody. */
  body?: unknown;
  ifMatch?: string;
  /** Sent as Idempotency-Key, so that a retried creation creates nothing twice. */
  idempotencyKey?: string;
  /** The answer's body as text (a file to download), not parsed as JSON. */
  text?: boolean;
  /** More request headers (Last-Event-ID on a stream resumed). */
  headers?: Record<string, string>;
  /** Stops the request (a stream the screen no longer shows). */
  signal?: AbortSignal;
}

async function problemOf(res: Response): Promise<ApiProblem> {
  const body = (await res.json().catch(() => undefined)) as Partial<ProblemDocument> | undefined;
  return new ApiProblem({
    type: body?.type ?? 'about:blank',
    title: body?.title ?? res.statusText ?? 'Request failed',
    status: body?.status ?? res.status,
    detail: body?.detail,
    errors: body?.errors,
  });
}

export interface Api {
  call<T>(method: string, path: string, options?: CallOptions): Promise<ApiAnswer<T>>;
  /** The answer itself, unread (an event stream), once it is a success; a failure is an ApiProblem. */
  open(path: string, options?: CallOptions): Promise<Response>;
}

export function createApi(settings: DashboardSettings): Api {
  async function send(method: string, path: string, options: CallOptions): Promise<Response> {
    const headers: Record<string, string> = { ...options.headers, authorization: `Bearer ${accessToken() ?? ''}` };
    const raw = options.body instanceof RawBody ? options.body : undefined;
    if (options.body !== undefined) headers['content-type'] = raw ? raw.type : 'application/json';
    if (options.ifMatch) headers['if-match'] = options.ifMatch;
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    try {
      return await fetch(`${settings.apiUrl}${path}`, {
        method,
        headers,
        body: raw ? raw.content : options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: options.signal,
      });
    } catch (err) {
      if (options.signal?.aborted) throw err;
      throw new ApiProblem({ type: 'about:blank', title: 'The Agents API could not be reached', status: 0, detail: settings.apiUrl });
    }
  }
  async function answer(method: string, path: string, options: CallOptions): Promise<Response> {
    let res = await send(method, path, options);
    if (res.status === 401 && (await refresh(settings))) res = await send(method, path, options);
    if (!res.ok) throw await problemOf(res);
    return res;
  }
  return {
    open: (path, options = {}) => answer('GET', path, options),
    async call<T>(method: string, path: string, options: CallOptions = {}) {
      const res = await answer(method, path, options);
      const data = res.status === 204 ? undefined : options.text ? await res.text() : await res.json();
      return { status: res.status, data: data as T, etag: res.headers.get('etag') };
    },
  };
}
