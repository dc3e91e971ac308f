// The Agents API's settings: the per-plan rate limits (docs/api.md, "Rate limits"), which
// override the plan catalogue's `api_requests_per_minute` when set, and the operator's
// organization (docs/api.md, "The operator").
import { ConfigError, readInt, readString, type Env } from '../../services/common/config.ts';

export interface ApiConfig {
  /** Requests per minute per organization, by the plan in force; unset: the catalogue's. */
  rateLimits: { starter?: number; professional?: number };
  /** Deleting organizations (docs/api.md, "Deleting an organization"). */
  organizationPurge: {
    /** Records each call of a purge step deletes. */
    batch: number;
    /** How long after the request the purge begins, so that writes in flight land first. */
    delayMs: number;
  };
  /**
   * The organization whose owners and admins act for the operator: they manage gateway keys and
   * shared MCP servers. Unset: nobody does (through the API).
   */
  operatorOrganizationId?: string;
}

const optionalLimit = (env: Env, name: string) =>
  readString(env, name) === undefined ? undefined : readInt(env, name, 1, { min: 1, max: 1_000_000 });

export function readApiConfig(env: Env): ApiConfig {
  return {
    rateLimits: {
      starter: optionalLimit(env, 'API_RATE_LIMIT_STARTER'),
      professional: optionalLimit(env, 'API_RATE_LIMIT_PROFESSIONAL'),
    },
    organizationPurge: {
      batch: readInt(env, 'ORGANIZATION_PURGE_BATCH', 500, { min: 1, max: 10_000 }),
      delayMs: readInt(env, 'ORGANIZATION_PURGE_DELAY_MS', 5_000, { min: 0, max: 3_600_000 }),
    },
    operatorOrganizationId: readOrganizationId(env, 'OPERATOR_ORGANIZATION_ID'),
  };
}

function readOrganizationId(env: Env, name: string): string | undefined {
  const value = readString(env, name);
  if (value !== undefined && !/^org_[A-Za-z0-9]{1,60}$/.test(value))
    throw new ConfigError(name, `expected an organization id (org_...), got "${value}"`);
  return value;
}
