// Memory seeding's settings (README.md, "Memory seeding"): who works runs and how, and whether
// runs may fetch URLs. URL sources are off unless SEEDING_URL_HOSTS names the hosts a run may
// fetch from (`*`: any public host); the outbound address policy applies to every fetch.
import { readBool, readInt, readString, type Env } from '../../common/config.ts';

export interface SeedingConfig {
  /** Hosts URL sources may name (lower case); empty: URL sources are refused; ['*']: any host. */
  urlHosts: string[];
  /** Fetches may reach loopback, private and link-local addresses (tests, closed networks). */
  allowPrivateUrls: boolean;
  /** One fetch's deadline, and the largest page it reads. */
  fetchTimeoutMs: number;
  /** How long a replica holds a run between renewals; a dead holder's run is taken over after it. */
  leaseMs: number;
  /** How often each replica looks for runs to work. */
  pollMs: number;
}

export function readSeedingConfig(env: Env): SeedingConfig {
  const hosts = readString(env, 'SEEDING_URL_HOSTS', '');
  return {
    urlHosts: hosts
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    allowPrivateUrls: readBool(env, 'SEEDING_ALLOW_PRIVATE_URLS', false),
    fetchTimeoutMs: readInt(env, 'SEEDING_FETCH_TIMEOUT_MS', 10_000, { min: 100, max: 120_000 }),
    leaseMs: readInt(env, 'SEEDING_LEASE_SECONDS', 30, { min: 1, max: 3_600 }) * 1000,
    pollMs: readInt(env, 'SEEDING_POLL_MS', 1_000, { min: 10, max: 60_000 }),
  };
}
