// A small client for the Agents API in tests: JSON in, status, headers and parsed JSON out.
export type Json = Record<string, any>;

export interface RestCall {
  method?: string;
  token?: string;
  apiKey?: string;
  body?: unknown;
  rawBody?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface RestResult {
  status: number;
  headers: Headers;
  json: Json;
  text: string;
}

export function restClient(baseUrl: () => string) {
  return async function call(path: string, init: RestCall = {}): Promise<RestResult> {
    const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    if (init.apiKey) headers['x-api-key'] = init.apiKey;
    let body: string | undefined;
    if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers['content-type'] = 'application/json';
    }
    if (init.rawBody !== undefined) {
      body = init.rawBody;
      headers['content-type'] = init.contentType ?? 'application/json';
    }
    const res = await fetch(`${baseUrl()}${path}`, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
    const text = await res.text();
    let json: Json = {};
    try {
      json = text ? (JSON.parse(text) as Json) : {};
    } catch {}
    return { status: res.status, headers: res.headers, json, text };
  };
}

/** A run as the API shows it has ended: it will not change again. */
export const isRunFinished = (run: Json): boolean => ['succeeded', 'failed', 'cancelled', 'timed_out'].includes(run.status);

/** An evaluation as the API shows it has ended. */
export const isEvaluationFinished = (evaluation: Json): boolean => evaluation.status === 'succeeded' || evaluation.status === 'failed';
