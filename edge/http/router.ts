// A small path router: static segments, `:name` parameters (one segment, percent-decoded) and a
// trailing `*name` that captures the rest of the path verbatim (still percent-encoded).
import type { IncomingMessage, ServerResponse } from 'node:http';

export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'OPTIONS';

export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  /** Decoded `:name` parameters and the raw `*rest` capture. */
  params: Record<string, string>;
  /** The path as received (still percent-encoded) and the query string. */
  path: string;
  query: URLSearchParams;
  requestId: string;
}

export type RouteHandler = (ctx: RouteContext) => void | Promise<void>;

interface Route {
  methods: Set<string>;
  segments: string[];
  handler: RouteHandler;
}

export interface RouteMatch {
  handler: RouteHandler;
  params: Record<string, string>;
}

export class Router {
  private readonly routes: Route[] = [];

  /** Registers `handler` for `methods` on `pattern` (for example `/:server/oauth/token`). */
  on(methods: Method | Method[], pattern: string, handler: RouteHandler): this {
    const list = Array.isArray(methods) ? methods : [methods];
    const set = new Set<string>(list);
    if (set.has('GET')) set.add('HEAD');
    this.routes.push({ methods: set, segments: splitPath(pattern), handler });
    return this;
  }

  get(pattern: string, handler: RouteHandler): this {
    return this.on('GET', pattern, handler);
  }

  post(pattern: string, handler: RouteHandler): this {
    return this.on('POST', pattern, handler);
  }

  /**
   * The first route, in registration order, whose pattern matches. `allowed` lists the methods
   * of routes whose pattern matched but whose method did not (for 405 and CORS preflight).
   */
  match(method: string, path: string): { match?: RouteMatch; allowed: string[] } {
    const parts = splitPath(path);
    const allowed = new Set<string>();
    for (const route of this.routes) {
      const params = matchSegments(route.segments, parts);
      if (!params) continue;
      if (route.methods.has(method)) return { match: { handler: route.handler, params }, allowed: [] };
      for (const m of route.methods) allowed.add(m);
    }
    return { allowed: [...allowed] };
  }
}

function splitPath(path: string): string[] {
  const trimmed = path.startsWith('/') ? path.slice(1) : path;
  return trimmed === '' ? [] : trimmed.split('/');
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const seg = pattern[i];
    if (seg.startsWith('*')) {
      params[seg.slice(1)] = parts.slice(i).join('/');
      return params;
    }
    if (i >= parts.length) return undefined;
    if (seg.startsWith(':')) {
      let value: string;
      try {
        value = decodeURIComponent(parts[i]);
      } catch {
        value = parts[i];
      }
      params[seg.slice(1)] = value;
    } else if (seg !== parts[i]) {
      return undefined;
    }
  }
  return pattern.length === parts.length ? params : undefined;
}
