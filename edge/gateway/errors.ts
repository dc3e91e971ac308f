// The gateway's error bodies. Gateway failures (unknown server, backend down, bad key) are
// `{"error": "<code>", "detail": "<message>"}`: FastAPI's `detail` plus a stable machine code.
// OAuth endpoints answer RFC 6749 `{"error", "error_description"}`; validation failures are
// FastAPI's HTTPValidationError (edge/http/validation.ts).
import type { ServerResponse } from 'node:http';
import { RequestValidationError } from '../http/validation.ts';
import { SERVER_NAME_PATTERN } from './config.ts';

export interface GatewayErrorBody {
  error: string;
  detail: string;
}

export function sendGatewayError(
  res: ServerResponse,
  status: number,
  error: string,
  detail: string,
  headers: Record<string, string> = {},
): void {
  const payload = JSON.stringify({ error, detail } satisfies GatewayErrorBody);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(res.req?.method === 'HEAD' ? undefined : payload);
}

/** An RFC 6749 §5.2 error. */
export class OAuthError extends Error {
  readonly error: string;
  readonly status: number;
  constructor(error: string, description: string, status = 400) {
    super(description);
    this.name = 'OAuthError';
    this.error = error;
    this.status = status;
  }
}

export function sendOAuthError(res: ServerResponse, err: OAuthError, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify({ error: err.error, error_description: err.message });
  res.writeHead(err.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    'cache-control': 'no-store',
    pragma: 'no-cache',
    ...headers,
  });
  res.end(payload);
}

/** The 422 for a `{server_name}` path parameter outside `[A-Za-z0-9._-]+`. */
export function serverNameError(name: string, field = 'server_name'): RequestValidationError | undefined {
  if (SERVER_NAME_PATTERN.test(name)) return undefined;
  const pattern = SERVER_NAME_PATTERN.source;
  return new RequestValidationError([
    {
      type: 'string_pattern_mismatch',
      loc: ['path', field],
      msg: `String should match pattern '${pattern}'`,
      input: name,
      ctx: { pattern },
    },
  ]);
}
