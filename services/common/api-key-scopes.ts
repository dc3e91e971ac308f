// The scopes of the Agents API's keys, shared by the agents service (which stores them) and the
// edge (which enforces them, edge/api/access.ts): each includes the ones before it.
export const API_KEY_SCOPES = ['read', 'write', 'admin'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** Whether a key with `scopes` may do what needs `needed`. */
export function scopesAllow(scopes: readonly string[], needed: ApiKeyScope): boolean {
  const rank = API_KEY_SCOPES.indexOf(needed);
  return scopes.some((scope) => API_KEY_SCOPES.indexOf(scope as ApiKeyScope) >= rank);
}
