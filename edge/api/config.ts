// The Agents API's settings: the per-plan rate limits (docs/api.md, "Rate limits"), and the
// operator's organization (docs/api.md, "The operator").
import { ConfigError, readInt, readString, type Env } from '../../services/common/config.ts';

export interface ApiConfig {
  /** Requests per minute per organization, by the plan in force. */
  rateLimits: { starter: number; professional: number };
  /**
   * The organization whose owners and admins act for the operator: they manage gateway keys and
   * shared MCP servers. Unset: nobody does (through the API).
   */
  operatorOrganizationId?: string;
}

export function readApiConfig(env: Env): ApiConfig {
  return {
    rateLimits: {
      starter: readInt(env, 'API_RATE_LIMIT_STARTER', 600, { min: 1, max: 1_000_000 }),
      professional: readInt(env, 'API_RATE_LIMIT_PROFESSIONAL', 3_000, { min: 1, max: 1_000_000 }),
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
