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

/** A body sent as it is, in its own media type (a YAML document, JSON Lines). */
export class RawBody {
  readonly text: string;
  readonly type: string;
  constructor(text: string, type: string) {
    this.text = text;
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
}

export function createApi(settings: DashboardSettings): Api {
  async function send(method: string, path: string, options: CallOptions): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${accessToken() ?? ''}` };
    const raw = options.body instanceof RawBody ? options.body : undefined;
    if (options.body !== undefined) headers['content-type'] = raw ? raw.type : 'application/json';
    if (options.ifMatch) headers['if-match'] = options.ifMatch;
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    try {
      return await fetch(`${settings.apiUrl}${path}`, {
        method,
        headers,
        body: raw ? raw.text : options.body === undefined ? undefined : JSON.stringify(options.body),
      });
    } catch {
      throw new ApiProblem({ type: 'about:blank', title: 'The Agents API could not be reached', status: 0, detail: settings.apiUrl });
    }
  }
  return {
    async call<T>(method: string, path: string, options: CallOptions = {}) {
      let res = await send(method, path, options);
      if (res.status === 401 && (await refresh(settings))) res = await send(method, path, options);
      if (!res.ok) throw await problemOf(res);
      const data = res.status === 204 ? undefined : options.text ? await res.text() : await res.json();
      return { status: res.status, data: data as T, etag: res.headers.get('etag') };
    },
  };
}
