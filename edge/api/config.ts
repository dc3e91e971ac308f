// The Agents API's settings: the per-plan rate limits (docs/api.md, "Rate limits").
import { readInt, type Env } from '../../services/common/config.ts';

export interface ApiConfig {
  /** Requests per minute per organization, by the plan in force. */
  rateLimits: { starter: number; professional: number };
  /** Deleting organizations (docs/api.md, "Deleting an organization"). */
  organizationPurge: {
    /** Records each call of a purge step deletes. */
    batch: number;
    /** How long after the request the purge begins, so that writes in flight land first. */
    delayMs: number;
  };
}

export function readApiConfig(env: Env): ApiConfig {
  return {
    rateLimits: {
      starter: readInt(env, 'API_RATE_LIMIT_STARTER', 600, { min: 1, max: 1_000_000 }),
      professional: readInt(env, 'API_RATE_LIMIT_PROFESSIONAL', 3_000, { min: 1, max: 1_000_000 }),
    },
    organizationPurge: {
      batch: readInt(env, 'ORGANIZATION_PURGE_BATCH', 500, { min: 1, max: 10_000 }),
      delayMs: readInt(env, 'ORGANIZATION_PURGE_DELAY_MS', 5_000, { min: 0, max: 3_600_000 }),
    },
  };
}
