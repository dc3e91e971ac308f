// The Agents API's settings: the per-plan rate limits (docs/api.md, "Rate limits"), which
// override the plan catalogue's `api_requests_per_minute` when set.
import { readInt, readString, type Env } from '../../services/common/config.ts';

export interface ApiConfig {
  /** Requests per minute per organization, by the plan in force; unset: the catalogue's. */
  rateLimits: { starter?: number; professional?: number };
}

const optionalLimit = (env: Env, name: string) =>
  readString(env, name) === undefined ? undefined : readInt(env, name, 1, { min: 1, max: 1_000_000 });

export function readApiConfig(env: Env): ApiConfig {
  return {
    rateLimits: {
      starter: optionalLimit(env, 'API_RATE_LIMIT_STARTER'),
      professional: optionalLimit(env, 'API_RATE_LIMIT_PROFESSIONAL'),
    },
  };
}
