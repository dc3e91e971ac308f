// What a gateway server may be called: its name is the first path segment of `{base_url}/{name}`,
// so it shares the URL space with the gateway's own routes. One rule for the servers file
// (edge/gateway/config.ts) and for servers managed through the Agents API (services/agents).

/** Names that routes of the gateway itself occupy at the root. */
export const RESERVED_SERVER_NAMES = new Set([
  '.',
  '..',
  '.well-known',
  'health',
  // The probes every listener answers first (edge/http/probes.ts).
  'livez',
  'readyz',
  'openapi.json',
  'docs',
  'authorize',
  'token',
  'register',
  'callback',
]);

export const SERVER_NAME_PATTERN = /^[A-Za-z0-9._-]+$/;

/** The MCP endpoint under `/{name}`: relative segments, none of them `.` or `..`. */
export const MCP_PATH_PATTERN = /^[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/;

export function isMcpPath(value: string): boolean {
  return MCP_PATH_PATTERN.test(value) && value.split('/').every((seg) => seg !== '.' && seg !== '..');
}

/** A scope token (RFC 6749 §3.3). */
export const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** An MCP tool name (1-128 of [A-Za-z0-9_.-], MCP 2025-11-25), or such a prefix followed by `*`. */
export const TOOL_PATTERN = /^[A-Za-z0-9_./-]{1,128}\*?$|^\*$/;

/** An http(s) URL without credentials or fragment. */
export function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password && !u.hash;
  } catch {
    return false;
  }
}
