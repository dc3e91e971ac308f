// The Agents API's settings: the per-plan rate limits (docs/api.md, "Rate limits").
import { readInt, type Env } from '../../services/common/config.ts';

export interface ApiConfig {
  /** Requests per minute per organization, by the plan in force. */
  rateLimits: { starter: number; professional: number };
}

export function readApiConfig(env: Env): ApiConfig {
  return {
    rateLimits: {
      starter: readInt(env, 'API_RATE_LIMIT_STARTER', 600, { min: 1, max: 1_000_000 }),
      professional: readInt(env, 'API_RATE_LIMIT_PROFESSIONAL', 3_000, { min: 1, max: 1_000_000 }),
    },
  };
}
