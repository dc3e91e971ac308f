// The scopes of the Agents API's keys, shared by the agents service (which stores them) and the
// edge (which enforces them, edge/api/access.ts and edge/mcp/brain-access.ts): each includes the
// ones before it. "read" reads (the Agents API, and the Brain's memories); "memories" also writes
// memories at the Brain; "write" also makes the changes machines may make at the Agents API;
// "admin" also the owner-and-admin operations machines may make.
export const API_KEY_SCOPES = ['read', 'memories', 'write', 'admin'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** Whether a key with `scopes` may do what needs `needed`. */
export function scopesAllow(scopes: readonly string[], needed: ApiKeyScope): boolean {
  const rank = API_KEY_SCOPES.indexOf(needed);
  return scopes.some((scope) => API_KEY_SCOPES.indexOf(scope as ApiKeyScope) >= rank);
}
